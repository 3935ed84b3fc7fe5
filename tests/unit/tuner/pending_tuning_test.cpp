// Tuning the recorded misses offline (src/tuner/pending_tuning.cpp): records tuned, stored and
// removed; records that cannot be tuned here reported and kept.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/pending.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

class PendingTuningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_.behaviour["def"].seconds = 2e-3;
    dev_.behaviour["fast"].seconds = 1e-3;
    op_ = fakes::make_fake_op(dev_, {"def", "fast"}, "def", &inputs_made_);
  }

  TunerOptions options() const {
    TunerOptions o;
    o.persist.store = "sqlite:" + (dir_ / "choices.db").string();
    o.hooks.log =
        Log::warnings_to([](std::string_view m) { ADD_FAILURE() << "unexpected warning: " << m; });
    return o;
  }

  // What a production run in mode cached records: the miss of `key` under the tags
  // power=ac.
  PendingMiss record(const Key& key) {
    Tuner production(dev_, options());
    production.set_environment_tags({{"power", "ac"}});
    PendingMiss miss = make_pending_miss(production.identity(*op_, key));
    production.store()->record_miss(miss);
    return miss;
  }

  std::unique_ptr<Store> store() const { return open_store(options().persist.store, {}); }

  // The catalog of this test: the fake op alone.
  PendingOpFinder finder() const {
    return [this](std::string_view name) -> const OpBase* {
      return name == op_->name() ? op_.get() : nullptr;
    };
  }

  testing::TempDir dir_;
  fakes::FakeDevice dev_;
  std::atomic<int> inputs_made_{0};
  std::unique_ptr<Op<fakes::FakeArgs>> op_;
};

TEST_F(PendingTuningTest, RecordedMissesAreTunedStoredAndNoLongerPending) {
  const std::vector<Key> keys{Key{{"n", 4}}, Key{{"n", 8}}, Key{{"n", 16}}};
  for (const Key& k : keys) record(k);
  ASSERT_EQ(store()->pending().size(), 3u);
  std::vector<std::string> told;
  PendingTuning tuning;
  tuning.on_outcome = [&](const PendingOutcome& o) { told.push_back(o.miss.key); };
  const auto outcomes = tune_pending(dev_, options(), finder(), tuning);
  ASSERT_EQ(outcomes.size(), 3u);
  for (const PendingOutcome& o : outcomes) {
    EXPECT_EQ(o.status, PendingStatus::tuned) << o.why;
    EXPECT_FALSE(o.kept());
    EXPECT_EQ(o.report.source, Source::searched);
    EXPECT_EQ(o.report.winner_name, "fast");
  }
  EXPECT_EQ(told, (std::vector<std::string>{"n=4", "n=8", "n=16"})) << "oldest first";
  EXPECT_TRUE(store()->pending().empty());
  EXPECT_EQ(store()->list().size(), 3u);

  // A later run in mode cached under the recorded tags serves them from the store.
  TunerOptions cached = options();
  cached.decide.mode = Mode::cached;
  cached.persist.environment = {{"power", "ac"}};
  Tuner later(dev_, cached);
  for (const Key& k : keys) {
    TuneReport r;
    later.select(*op_, k, &r);
    EXPECT_EQ(r.source, Source::cache_replay) << k.text() << ": " << r.reason;
    EXPECT_EQ(r.winner_name, "fast");
  }
}

TEST_F(PendingTuningTest, AnOpNobodyKnowsIsReportedAndKept) {
  PendingMiss gone = record(Key{{"n", 4}});
  gone.op = "renamed_op";
  gone.identity_digest = "0123456789abcdef0123456789abcdef";
  store()->record_miss(gone);
  const auto outcomes = tune_pending(dev_, options(), finder());
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].status, PendingStatus::tuned) << outcomes[0].why;
  EXPECT_EQ(outcomes[1].status, PendingStatus::unknown_op);
  EXPECT_TRUE(outcomes[1].failed());
  EXPECT_NE(outcomes[1].why.find("renamed_op"), std::string::npos) << outcomes[1].why;
  const auto left = store()->pending();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].op, "renamed_op");
}

TEST_F(PendingTuningTest, ABadKeyAChangedCandidateSetAndABadRecordAreKept) {
  PendingMiss base = record(Key{{"n", 4}});
  store()->remove_pending(base.identity_digest);
  auto variant = [&](const char* digest, auto change) {
    PendingMiss m = base;
    m.identity_digest = digest;
    change(m);
    store()->record_miss(m);
  };
  variant("d1", [](PendingMiss& m) { m.key = "this is not a key"; });
  variant("d2", [](PendingMiss& m) { m.candidates = "00000000000000000000000000000000"; });
  variant("d3", [](PendingMiss& m) { m.environment = "[1,2]"; });
  variant("d4", [](PendingMiss& m) { m.numerics_policy = "sloppy"; });
  const auto outcomes = tune_pending(dev_, options(), finder());
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(outcomes[0].status, PendingStatus::bad_key);
  EXPECT_EQ(outcomes[1].status, PendingStatus::candidates_changed);
  EXPECT_EQ(outcomes[2].status, PendingStatus::bad_record);
  EXPECT_EQ(outcomes[3].status, PendingStatus::bad_record);
  for (const PendingOutcome& o : outcomes) {
    EXPECT_TRUE(o.failed());
    EXPECT_FALSE(o.why.empty());
  }
  EXPECT_NE(outcomes[3].why.find("sloppy"), std::string::npos) << outcomes[3].why;
  EXPECT_EQ(store()->pending().size(), 4u);
  EXPECT_EQ(inputs_made_.load(), 0) << "nothing was searched";
}

TEST_F(PendingTuningTest, AMissOfAnotherDeviceIsLeftForThatDevice) {
  PendingMiss miss = record(Key{{"n", 4}});
  store()->remove_pending(miss.identity_digest);
  miss.device = R"({"backend":"opencl","product":"another GPU"})";
  store()->record_miss(miss);
  const auto outcomes = tune_pending(dev_, options(), finder());
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].status, PendingStatus::other_device);
  EXPECT_TRUE(outcomes[0].kept());
  EXPECT_FALSE(outcomes[0].failed()) << "not this machine's to act on";
  EXPECT_EQ(store()->pending().size(), 1u);
}

// A device whose identity is not known stores nothing: the search runs, the record stays.
TEST_F(PendingTuningTest, ASearchThatStoresNothingKeepsTheRecord) {
  record(Key{{"n", 4}});
  const_cast<DeviceIdentity&>(dev_.identity()).known = false;
  const auto outcomes = tune_pending(dev_, options(), finder());
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].status, PendingStatus::not_stored) << outcomes[0].why;
  EXPECT_TRUE(outcomes[0].failed());
  EXPECT_NE(outcomes[0].why.find("no choice was stored"), std::string::npos) << outcomes[0].why;
  EXPECT_EQ(store()->pending().size(), 1u);
  EXPECT_TRUE(store()->list().empty());
}

TEST_F(PendingTuningTest, OnlyTheNamedOpsRecordsAreTuned) {
  record(Key{{"n", 4}});
  PendingTuning tuning;
  tuning.op = "another_op";
  EXPECT_TRUE(tune_pending(dev_, options(), finder(), tuning).empty());
  EXPECT_EQ(store()->pending().size(), 1u);
}

TEST_F(PendingTuningTest, WithoutAStoreThereIsNothingToReadAndItSaysSo) {
  TunerOptions none = options();
  none.persist.store = "none";
  try {
    tune_pending(dev_, none, finder());
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sqlite:PATH"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunekit
