// The model link of the chain (src/tuner/model_source.cpp, ModelOptions::serve): a miss the
// store and the artifact cannot answer is served the cost model's pick, validated once and
// never stored; in mode tune, callers that find the key being searched get it meanwhile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>

#include "fakes/fake_device.hpp"
#include "fakes/test_envelope.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

using testing::compute_work;

class ModelSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tunekit-model-source-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    dev_.behaviour["def"].seconds = 2e-3;
    dev_.behaviour["fast"].seconds = 1e-3;
    dev_.behaviour["slow"].seconds = 5e-3;
    // The model ranks "fast" first, as the device does: a non-default pick.
    works_ = {
        {"def", compute_work(2e-3)}, {"fast", compute_work(1e-3)}, {"slow", compute_work(5e-3)}};
    op_ = fakes::make_fake_op(dev_, {"def", "fast", "slow"}, "def", &inputs_made_);
    op_->work([this](const Key&, const Candidate& c) -> std::optional<Work> {
      auto it = works_.find(c.name);
      if (it == works_.end()) return std::nullopt;
      return it->second;
    });
  }
  void TearDown() override { fs::remove_all(dir_); }

  TunerOptions options(Mode mode, bool serve) const {
    TunerOptions o;
    o.decide.mode = mode;
    o.persist.store = "sqlite:" + (dir_ / "choices.db").string();
    o.model.envelope = testing::test_envelope({});
    o.model.serve = serve;
    return o;
  }
  std::string name(const Choice& c) const { return op_->candidate(c.index).name; }

  fs::path dir_;
  fakes::FakeDevice dev_;
  std::atomic<int> inputs_made_{0};
  std::map<std::string, Work> works_;
  std::unique_ptr<Op<fakes::FakeArgs>> op_;
  Key key_{{"n", 8}};
};

TEST_F(ModelSourceTest, CachedModeServesTheModelsPickStoresNothingAndRecordsTheMiss) {
  Tuner tuner(dev_, options(Mode::cached, true));
  TuneReport r;
  const Choice c = tuner.select(*op_, key_, &r);
  EXPECT_EQ(name(c), "fast");
  EXPECT_EQ(c.source, Source::model);
  EXPECT_EQ(r.source, Source::model);
  EXPECT_EQ(r.winner_name, "fast");
  EXPECT_NE(r.reason.find("cost model"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.candidates.empty());  // nothing was measured
  // Nothing stored; the miss is pending, to be measured by `tunekit tune --pending`.
  EXPECT_FALSE(tuner.store()->find(tuner.identity(*op_, key_).digest().hex()));
  EXPECT_EQ(tuner.store()->pending().size(), 1u);
  // Validated once (one workload), and again served without another validation.
  EXPECT_EQ(inputs_made_.load(), 1);
  EXPECT_EQ(tuner.select(*op_, key_).source, Source::model);
  EXPECT_EQ(inputs_made_.load(), 1);
  EXPECT_FALSE(tuner.settled(*op_, key_));  // a guess is not a settled choice
}

TEST_F(ModelSourceTest, WithoutTheOptionCachedModeServesTheDefault) {
  Tuner tuner(dev_, options(Mode::cached, false));
  const Choice c = tuner.select(*op_, key_);
  EXPECT_EQ(name(c), "def");
  EXPECT_EQ(c.source, Source::search_disabled);
  EXPECT_EQ(inputs_made_.load(), 0);  // nothing ran
}

TEST_F(ModelSourceTest, APickThatFailsValidationIsNotServed) {
  dev_.behaviour["fast"].wrong = true;
  Tuner tuner(dev_, options(Mode::cached, true));
  const Choice c = tuner.select(*op_, key_);
  EXPECT_EQ(name(c), "def");
  EXPECT_EQ(c.source, Source::search_disabled);
}

TEST_F(ModelSourceTest, WhereTheModelDeclinesTheDefaultStands) {
  TunerOptions o = options(Mode::cached, true);
  o.model.envelope.reset();  // no envelope, no profile: the model declines
  Tuner tuner(dev_, o);
  EXPECT_EQ(tuner.select(*op_, key_).source, Source::search_disabled);
  works_.erase("def");  // an unscored default: declines too
  Tuner unscored(dev_, options(Mode::cached, true));
  EXPECT_EQ(unscored.select(*op_, key_).source, Source::search_disabled);
}

TEST_F(ModelSourceTest, APickThatFailedLiveIsNeverServedAgainForTheKey) {
  Tuner tuner(dev_, options(Mode::cached, true));
  ASSERT_EQ(name(tuner.select(*op_, key_)), "fast");
  dev_.behaviour["fast"].throw_at_launch = true;  // validated, then fails in production
  fakes::FakeArgs args{std::vector<float>(8)};
  EXPECT_THROW(tuner.run(*op_, args), std::runtime_error);
  const Choice after = tuner.select(*op_, key_);
  EXPECT_EQ(name(after), "def");
  EXPECT_EQ(after.source, Source::search_disabled);
  // The ban is in the store: a later process does not serve the pick either.
  dev_.behaviour["fast"].throw_at_launch = false;
  Tuner later(dev_, options(Mode::cached, true));
  EXPECT_EQ(name(later.select(*op_, key_)), "def");
}

TEST_F(ModelSourceTest, AStoredChoiceComesBeforeTheModel) {
  {
    Tuner tune(dev_, options(Mode::tune, false));
    dev_.behaviour["slow"].seconds = 0.2e-3;  // measured, "slow" wins against the model
    ASSERT_EQ(name(tune.select(*op_, key_)), "slow");
  }
  Tuner tuner(dev_, options(Mode::cached, true));
  const Choice c = tuner.select(*op_, key_);
  EXPECT_EQ(name(c), "slow");
  EXPECT_EQ(c.source, Source::cache_replay);
}

TEST_F(ModelSourceTest, TuneModeServesThePickToCallersWhileTheSearchRunsAndStillSearches) {
  std::atomic<bool> started{false};
  std::atomic<bool> answered{false};
  // The search blocks in its first launch until the other caller has been answered.
  dev_.behaviour["def"].hook = [&] {
    started = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!answered.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  };
  op_->checksum();  // seal before the threads start
  Tuner tuner(dev_, options(Mode::tune, true));
  Choice searched;
  std::thread searcher([&] { searched = tuner.select(*op_, key_); });
  while (!started.load()) std::this_thread::yield();  // the search has started
  TuneReport r;
  const Choice meanwhile = tuner.select(*op_, key_, &r);
  answered = true;
  searcher.join();
  EXPECT_EQ(meanwhile.source, Source::model);
  EXPECT_EQ(name(meanwhile), "fast");
  EXPECT_NE(r.reason.find("another caller is tuning this key"), std::string::npos) << r.reason;
  EXPECT_EQ(searched.source, Source::searched);
  EXPECT_EQ(name(searched), "fast");
  EXPECT_TRUE(tuner.store()->find(tuner.identity(*op_, key_).digest().hex()));
}

TEST_F(ModelSourceTest, TuneModeWithoutTheOptionGivesCallersTheDefault) {
  std::atomic<bool> started{false};
  std::atomic<bool> answered{false};
  dev_.behaviour["def"].hook = [&] {
    started = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!answered.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  };
  op_->checksum();
  Tuner tuner(dev_, options(Mode::tune, false));
  std::thread searcher([&] { tuner.select(*op_, key_); });
  while (!started.load()) std::this_thread::yield();
  const Choice meanwhile = tuner.select(*op_, key_);
  answered = true;
  searcher.join();
  EXPECT_EQ(meanwhile.source, Source::use_default);
  EXPECT_EQ(name(meanwhile), "def");
}

}  // namespace
}  // namespace tunekit
