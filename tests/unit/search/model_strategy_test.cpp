// The model strategy (src/search/model_strategy.cpp) through the live tuner: only the model's
// best are measured, unscored candidates and the default always are, and a reading near the
// roofline floor ends the search; such a search is partial (stored as budget_cut).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>

#include "fakes/fake_device.hpp"
#include "fakes/test_envelope.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

Envelope single_thread_envelope() {
  return testing::test_envelope({.peak_all = 100e9, .dram_all = 10e9, .threads = 1});
}

using testing::compute_work;

class ModelStrategy : public ::testing::Test {
 protected:
  void SetUp() override {
    // Model ranks: c1 < c2 < c3 < c4 < def; the device agrees.
    const std::map<std::string, double> t{
        {"def", 5e-3}, {"c1", 1e-3}, {"c2", 2e-3}, {"c3", 3e-3}, {"c4", 4e-3}};
    for (const auto& [name, s] : t) {
      dev_.behaviour[name].seconds = s;
      works_[name] = compute_work(s);
    }
    op_ = fakes::make_fake_op(dev_, {"def", "c1", "c2", "c3", "c4", "unscored"}, "def");
    dev_.behaviour["unscored"].seconds = 6e-3;
    op_->work([this](const Key&, const Candidate& c) -> std::optional<Work> {
      auto it = works_.find(c.name);
      if (it == works_.end()) return std::nullopt;
      return it->second;
    });
  }
  TunerOptions options() const {
    TunerOptions o;
    o.model.envelope = single_thread_envelope();
    o.decide.confirm_pairs = 0;
    return o;
  }
  // Measured: ok, or cut as hopeless against a faster one (not skipped).
  static bool measured(const CandidateReport& c) {
    return c.outcome.status == Status::ok || c.outcome.status == Status::hopeless;
  }
  const CandidateReport& candidate(const TuneReport& r, const std::string& name) {
    for (const auto& c : r.candidates)
      if (c.name == name) return c;
    throw std::runtime_error("no candidate " + name);
  }
  // Not measured at all: a pruned point is never proposed, so the report does not list it.
  static bool untouched(const TuneReport& r, const std::string& name) {
    for (const auto& c : r.candidates)
      if (c.name == name) return false;
    return true;
  }

  fakes::FakeDevice dev_;
  std::map<std::string, Work> works_;
  std::unique_ptr<Op<fakes::FakeArgs>> op_;
  Key key_{{"n", 4}};
};

TEST_F(ModelStrategy, TopKMeasuresOnlyTheBestTheDefaultAndTheUnscored) {
  TunerOptions o = options();
  o.decide.strategy = "model:top=2";
  Tuner tuner(dev_, o);
  const TuneReport r = tuner.tune(*op_, key_);
  EXPECT_EQ(r.winner_name, "c1");
  for (const char* name : {"def", "c1", "c2", "unscored"})
    EXPECT_TRUE(measured(candidate(r, name))) << name;
  for (const char* pruned : {"c3", "c4"}) EXPECT_TRUE(untouched(r, pruned)) << pruned;
  EXPECT_TRUE(r.budget.cut);
  EXPECT_NE(r.budget.stopped.find("pruned"), std::string::npos) << r.budget.stopped;
  // The model's order: the default first (the floor), then c1, c2, then the unscored one.
  ASSERT_EQ(r.candidates.size(), 4u);
  EXPECT_EQ(r.candidates[0].name, "def");
  EXPECT_EQ(r.candidates[1].name, "c1");
  EXPECT_EQ(r.candidates[2].name, "c2");
  EXPECT_EQ(r.candidates[3].name, "unscored");
}

TEST_F(ModelStrategy, FractionKeepsTheRoundedUpShare) {
  TunerOptions o = options();
  o.decide.strategy = "model:fraction=0.5";  // ceil(0.5 x 5) = 3: c1, c2, c3 (and the default)
  Tuner tuner(dev_, o);
  const TuneReport r = tuner.tune(*op_, key_);
  EXPECT_TRUE(measured(candidate(r, "c3")));
  EXPECT_TRUE(untouched(r, "c4"));
}

TEST_F(ModelStrategy, WithoutAnEnvelopeEveryCandidateIsMeasured) {
  TunerOptions o = options();
  o.model.envelope.reset();
  o.decide.strategy = "model:top=1";
  Tuner tuner(dev_, o);
  const TuneReport r = tuner.tune(*op_, key_);
  EXPECT_EQ(r.candidates.size(), op_->size());  // nothing is scored: nothing is pruned
  for (const auto& c : r.candidates) EXPECT_TRUE(measured(c)) << c.name;
}

TEST_F(ModelStrategy, MalformedPruneSpecsAreUsageErrors) {
  for (const char* bad :
       {"model:top", "model:top=0", "model:top=1.5", "model:fraction=0", "model:fraction=2",
        "model:best=3", "model:top=x", "model:floor=-1", "model:floor=nan", "model:fraction=inf"}) {
    TunerOptions o = options();
    o.decide.strategy = bad;
    EXPECT_THROW(Tuner(dev_, o), UsageError) << bad;
  }
}

TEST_F(ModelStrategy, ExhaustiveStopsNearTheRooflineFloor) {
  // c1's floor is 1 ms and it measures 1 ms: within 1.5x, so after the default and c1 the
  // search stops (model order: def, c1, c2, ...).
  TunerOptions o = options();
  o.decide.strategy = "model:floor=1.5";
  Tuner tuner(dev_, o);
  const TuneReport r = tuner.tune(*op_, key_);
  EXPECT_EQ(r.winner_name, "c1");
  EXPECT_TRUE(untouched(r, "c2"));
  EXPECT_TRUE(r.budget.cut);
  // Off: everything is measured.
  TunerOptions all_options = options();
  all_options.decide.strategy = "model";
  Tuner full(dev_, all_options);
  const TuneReport all = full.tune(*op_, key_);
  EXPECT_TRUE(measured(candidate(all, "c4")));
}

TEST_F(ModelStrategy, ExhaustiveKeepsGoingWhileFarFromTheFloor) {
  // The floor is c1's 1 ms; the device is 3x slower than the model everywhere.
  for (auto& [name, b] : dev_.behaviour) b.seconds *= 3;
  TunerOptions o = options();
  o.decide.strategy = "model:floor=1.5";
  Tuner tuner(dev_, o);
  const TuneReport r = tuner.tune(*op_, key_);
  for (const auto& c : r.candidates) EXPECT_TRUE(measured(c)) << c.name;
}

TEST_F(ModelStrategy, TheModelsPickSurvivesTopOne) {
  // c2 scores a hair under c1 (tied within the band) but moves more bytes: the model picks c1.
  // A rank from a strict sort on the score made c1 rank 2, and top:1 pruned the model's pick.
  works_["c2"] = compute_work(0.995e-3);
  works_["c2"].reread_bytes = 20e6;
  works_["c1"].reread_bytes = 5e6;
  TunerOptions o = options();
  o.decide.strategy = "model:top=1";
  Tuner tuner(dev_, o);
  ModelReport m;
  tuner.model_default(*op_, key_, &m);
  EXPECT_EQ(m.winner_name, "c1");
  const TuneReport r = tuner.tune(*op_, key_);
  EXPECT_TRUE(measured(candidate(r, "c1")));
  EXPECT_TRUE(untouched(r, "c2"));
  EXPECT_EQ(r.winner_name, "c1");
}

TEST_F(ModelStrategy, APartialSearchIsReplacedByAFullOne) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tunekit-guided-" + std::to_string(getpid()));
  fs::remove_all(dir);
  // The model is wrong about c4: it ranks last among the c's but is the fastest on the device.
  dev_.behaviour["c4"].seconds = 0.5e-3;
  TunerOptions o = options();
  o.persist.store = "sqlite:" + (dir / "choices.db").string();
  o.decide.strategy = "model:top=1";
  {
    Tuner pruned(dev_, o);
    EXPECT_EQ(pruned.select(*op_, key_).source, Source::searched);
    const auto entries = pruned.store()->list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].winner, "c1");
    EXPECT_TRUE(entries[0].budget_cut);
  }
  {
    Tuner again(dev_, o);  // a partial search is served to a partial search
    EXPECT_EQ(again.select(*op_, key_).source, Source::cache_replay);
  }
  TunerOptions full = o;
  full.decide.strategy = "exhaustive";
  {
    Tuner unrestricted(dev_, full);
    TuneReport r;
    EXPECT_EQ(unrestricted.select(*op_, key_, &r).source, Source::searched);
    EXPECT_EQ(r.winner_name, "c4");
    const auto entries = unrestricted.store()->list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].winner, "c4");
    EXPECT_FALSE(entries[0].budget_cut);
  }
  Tuner replay(dev_, full);
  EXPECT_EQ(replay.select(*op_, key_).source, Source::cache_replay);
  // A floor stop is partial too.
  fs::remove_all(dir);
  TunerOptions floor = full;
  floor.decide.strategy = "model:floor=1.5";
  {
    Tuner stopped(dev_, floor);
    stopped.select(*op_, key_);
    const auto entries = stopped.store()->list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_TRUE(entries[0].budget_cut);
  }
  fs::remove_all(dir);
}

// The default strategy on a small space (auto: every point) measures the cost model's best
// first where there is a model: a slow point enumerated before the fast one is then judged
// against the fast one (cut as hopeless, 3x behind) rather than against the default (a full
// window); without a model, enumeration order, as before. The same points and winner either way.
TEST(AutoStrategy, ASmallSpaceIsMeasuredInTheModelsOrderWhereThereIsAModel) {
  auto run = [](bool with_model) {
    fakes::FakeDevice dev;
    const std::map<std::string, double> t{{"def", 5e-3}, {"slow", 3e-3}, {"fast", 1e-3}};
    for (const auto& [name, s] : t) dev.behaviour[name].seconds = s;
    auto op = fakes::make_fake_op(dev, {"def", "slow", "fast"}, "def");
    op->work([t](const Key&, const Candidate& c) -> std::optional<Work> {
      return compute_work(t.at(std::string(c.name)));
    });
    TunerOptions o;
    if (with_model) o.model.envelope = single_thread_envelope();
    o.decide.confirm_pairs = 0;
    o.persist.store = "none";
    TuneReport r;
    Tuner(dev, o).select(*op, Key{{"n", 4}}, &r);
    EXPECT_EQ(r.strategy, "auto");
    EXPECT_EQ(r.winner_name, "fast");
    EXPECT_FALSE(r.budget.cut);  // every point measured: not a partial search
    return r;
  };
  const TuneReport modelled = run(true);
  ASSERT_EQ(modelled.candidates.size(), 3u);
  EXPECT_EQ(modelled.candidates[0].name, "def");
  EXPECT_EQ(modelled.candidates[1].name, "fast");
  EXPECT_EQ(modelled.candidates[2].name, "slow");
  EXPECT_EQ(modelled.candidates[2].outcome.status, Status::hopeless)
      << modelled.candidates[2].outcome.message;

  const TuneReport plain = run(false);
  ASSERT_EQ(plain.candidates.size(), 3u);
  EXPECT_EQ(plain.candidates[1].name, "slow");
  EXPECT_EQ(plain.candidates[2].name, "fast");
  EXPECT_EQ(plain.candidates[1].outcome.status, Status::ok);
  EXPECT_GT(plain.candidates[1].timing->samples.size(),
            modelled.candidates[2].timing->samples.size());
}

}  // namespace
}  // namespace tunekit
