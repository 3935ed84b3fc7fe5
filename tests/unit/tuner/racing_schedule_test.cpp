// Racing (src/tuner/racing_schedule.cpp) against a fake device with known time distributions.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/report_lookup.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using testing::candidate_named;

void set_up(fakes::FakeDevice& dev, double jitter) {
  dev.behaviour["def"] = {.seconds = 1.00e-3, .jitter = jitter};
  dev.behaviour["best"] = {.seconds = 0.80e-3, .jitter = jitter};
  dev.behaviour["close"] = {.seconds = 0.86e-3, .jitter = jitter};
  dev.behaviour["slow"] = {.seconds = 2.0e-3, .jitter = jitter};
  dev.behaviour["slower"] = {.seconds = 4.0e-3, .jitter = jitter};
}

// A racing select of the fake op of these candidates ("def" the default).
TuneReport race(fakes::FakeDevice& dev, const std::vector<std::string>& names) {
  auto op = fakes::make_fake_op(dev, names, "def");
  TunerOptions o;
  o.decide.schedule = "racing";
  TuneReport r;
  Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
  return r;
}

TEST(Racing, DropsClearlySlowerCandidatesEarly) {
  fakes::FakeDevice dev;
  set_up(dev, 0.05);
  // 4 % behind: the first check (8 samples of +-5 % noise) cannot separate it from "best",
  // whatever the seeded noise's sequence.
  dev.behaviour["close"].seconds = 0.83e-3;
  const TuneReport r = race(dev, {"def", "best", "close", "slow", "slower"});
  EXPECT_EQ(r.winner_name, "best");
  EXPECT_EQ(r.schedule, "racing");
  // The slow ones were dropped at the first check (8 samples); the leaders ran longer.
  EXPECT_EQ(candidate_named(r, "slow").timing->samples.size(), 8u);
  EXPECT_EQ(candidate_named(r, "slower").timing->samples.size(), 8u);
  EXPECT_GT(candidate_named(r, "best").timing->samples.size(), 8u);
  EXPECT_TRUE(candidate_named(r, "slow").outcome.ok());  // dropped, not failed: its reading is kept
}

// The far-behind cuts of a full window (far_behind_cut) apply after every round: a runner far
// behind the best median known leaves after its first round (4 samples), not at min_samples.
TuneReport race_far_behind(bool clean_readings) {
  fakes::FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 1.0e-3, .jitter = 0.02};
  dev.behaviour["best"] = {.seconds = 0.5e-3, .jitter = 0.02};
  dev.behaviour["near"] = {.seconds = 0.55e-3, .jitter = 0.02};
  dev.behaviour["behind"] = {.seconds = 1.25e-3, .jitter = 0.02};  // 2.5x the best
  dev.behaviour["far"] = {.seconds = 5.0e-3, .jitter = 0.02};      // 10x
  // 0: the clock says no reading waited for a CPU; none scripted: it cannot tell (-1).
  if (clean_readings) dev.scripted_clock().waits.assign(100000, 0.0);
  TuneReport r = race(dev, {"def", "best", "near", "behind", "far"});
  EXPECT_EQ(r.winner_name, "best");
  return r;
}

TEST(Racing, AFarBehindRunnerLeavesAfterItsFirstRound) {
  const TuneReport unknown = race_far_behind(false);
  EXPECT_EQ(candidate_named(unknown, "far").timing->samples.size(), 4u);  // 10x: far_behind_ratio
  EXPECT_EQ(candidate_named(unknown, "behind").timing->samples.size(), 8u);  // min_samples
  EXPECT_TRUE(candidate_named(unknown, "far").outcome.ok());  // dropped, its reading kept
  EXPECT_GT(candidate_named(unknown, "near").timing->samples.size(), 4u);

  const TuneReport clean = race_far_behind(true);
  EXPECT_EQ(candidate_named(clean, "far").timing->samples.size(), 4u);
  EXPECT_EQ(candidate_named(clean, "behind").timing->samples.size(), 4u);  // 2.5x, clean: 2x
  EXPECT_EQ(candidate_named(clean, "behind").timing->clean, 4);
  EXPECT_GE(candidate_named(clean, "def").timing->samples.size(), 8u);  // the floor: never cut
  EXPECT_GT(candidate_named(clean, "near").timing->samples.size(), 4u);
}

// A strategy that proposes one point at a time (surrogate's batch=1, anneal's walk) hands racing
// batches of one: a lone runner races the incumbent (the best of earlier batches). Its first
// window (min_samples) is cut within as a full window is — a far-behind one after two samples,
// a hopeless one once its median cannot come within hopeless_ratio — and a clearly slower one
// leaves at min_samples; a survivor gets the rest of its full window; the default, also alone,
// is measured in full.
TEST(Racing, ALoneRunnerRacesTheIncumbent) {
  fakes::FakeDevice dev;
  std::vector<std::string> names{"def", "best"};
  dev.behaviour["def"] = {.seconds = 1.0e-3, .jitter = 0.02};
  dev.behaviour["best"] = {.seconds = 0.5e-3, .jitter = 0.02};
  for (int i = 0; i < 6; ++i) {
    names.push_back("far" + std::to_string(i));
    dev.behaviour[names.back()] = {.seconds = 10.0e-3, .jitter = 0.02};  // 10x the default
    names.push_back("slow" + std::to_string(i));
    dev.behaviour[names.back()] = {.seconds = 1.4e-3, .jitter = 0.02};  // 1.4x the default
  }
  auto op = fakes::make_fake_op(dev, names, "def");
  TunerOptions o;
  o.decide.schedule = "racing";
  o.decide.strategy = "surrogate:init=1";  // no initial design; batch=1: one point a batch
  TuneReport r;
  Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
  EXPECT_EQ(r.winner_name, "best");
  int far = 0, slow = 0;
  for (const CandidateReport& c : r.candidates) {
    if (!c.timing || c.name == "def" || c.name == "best") continue;
    const std::size_t n = c.timing->samples.size();
    if (c.name.starts_with("far")) {
      ++far;
      EXPECT_EQ(c.outcome.status, Status::hopeless) << c.name;
      EXPECT_EQ(n, 2u) << c.name;  // far_behind_ratio: 10x after two samples
    } else {
      ++slow;
      // 2.8x "best": hopeless within the window; 1.4x "def" (the incumbent before "best"
      // was measured): dropped at min_samples, its reading kept.
      EXPECT_TRUE(c.outcome.status == Status::hopeless ? n < 8 : c.outcome.ok() && n == 8)
          << c.name << ": " << c.outcome.message << ", " << n << " samples";
    }
  }
  EXPECT_EQ(far, 6);
  EXPECT_EQ(slow, 6);
  EXPECT_GT(candidate_named(r, "best").timing->samples.size(), 8u);  // ahead: a full window
  EXPECT_GT(candidate_named(r, "def").timing->samples.size(), 8u);   // the floor: in full
}

TEST(Racing, PicksTheTrueBestIn99PercentOf1000SeededRuns) {
  int right = 0;
  long samples_on_slow = 0;
  long samples_total = 0;
  for (int seed = 0; seed < 1000; ++seed) {
    fakes::FakeDevice dev;
    dev.rng.seed(static_cast<std::uint64_t>(seed));
    set_up(dev, 0.15);  // +-15 % uniform noise on every reading
    auto op = fakes::make_fake_op(dev, {"def", "best", "close", "slow", "slower"}, "def");
    TunerOptions o;
    o.decide.schedule = "racing";
    TuneReport r;
    Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
    right += r.winner_name == "best";
    for (const auto& c : r.candidates) {
      if (!c.timing) continue;
      samples_total += static_cast<long>(c.timing->samples.size());
      if (c.name == "slow" || c.name == "slower")
        samples_on_slow += static_cast<long>(c.timing->samples.size());
    }
  }
  EXPECT_GE(right, 990) << "true best picked in " << right << " of 1000 runs";
  // The two slow candidates took a small share of all samples.
  EXPECT_LT(static_cast<double>(samples_on_slow) / static_cast<double>(samples_total), 0.25);
}

TEST(Racing, ShortCircuitLimitAndBadOptions) {
  fakes::FakeDevice dev;
  set_up(dev, 0.0);
  auto op = fakes::make_fake_op(dev, {"def", "best", "close", "slow", "slower"}, "def");
  TunerOptions o;
  o.decide.schedule = "racing:min_samples=4,round=4";
  o.decide.finalists = 0;   // the race's own samples (no final race after it)
  o.decide.limit = 0.9e-3;  // "best" is already good enough at the first check
  TuneReport r;
  Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
  EXPECT_EQ(r.winner_name, "best");
  EXPECT_EQ(candidate_named(r, "best").timing->samples.size(), 4u);

  TunerOptions bad;
  bad.decide.schedule = "racing:rounds=4";
  EXPECT_THROW(Tuner(dev, bad), UsageError);
  bad.decide.schedule = "bogus";
  EXPECT_THROW(Tuner(dev, bad), UsageError);
  bad.decide.schedule = "racing:z=abc";
  EXPECT_THROW(Tuner(dev, bad), UsageError);
}

TEST(Racing, RoundWarmupLaunchesBeforeEveryRoundAfterTheFirst) {
  // With round_warmup=1 each round after the first starts with one untimed launch, and the
  // readings are the same: "best" and "close" race in rounds of 4; the default races alone
  // (two windows: min_samples, then the rest of a full window).
  auto run = [](const std::string& schedule) {
    fakes::FakeDevice dev;
    set_up(dev, 0.0);
    auto op = fakes::make_fake_op(dev, {"def", "best", "close"}, "def");
    TunerOptions o;
    o.decide.schedule = schedule;
    o.decide.finalists = 0;  // the race's own rounds (no final race after it)
    TuneReport r;
    Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
    return r;
  };
  const TuneReport plain = run("racing");
  const TuneReport warmed = run("racing:round_warmup=1");
  for (const char* name : {"best", "close"}) {
    const TimingResult& p = *candidate_named(plain, name).timing;
    const TimingResult& w = *candidate_named(warmed, name).timing;
    ASSERT_EQ(p.samples.size(), w.samples.size()) << name;
    const long long rounds = (static_cast<long long>(p.samples.size()) + 3) / 4;
    ASSERT_GT(rounds, 1) << name;
    EXPECT_EQ(w.dispatches - p.dispatches, rounds - 1) << name;
  }
  const TimingResult& p = *candidate_named(plain, "def").timing;
  const TimingResult& w = *candidate_named(warmed, "def").timing;
  ASSERT_EQ(p.samples.size(), w.samples.size());
  ASSERT_GT(p.samples.size(), 8u);
  EXPECT_EQ(w.dispatches - p.dispatches, 1);

  fakes::FakeDevice dev;
  TunerOptions bad;
  bad.decide.schedule = "racing:round_warmup=-1";
  EXPECT_THROW(Tuner(dev, bad), UsageError);
}

// An op that quiesces its candidates (Op::quiesce: OpenBLAS's spinning threads) has each
// stopped after its validation run and after every window, and every window after the first
// starts with an untimed launch (the restart), as round_warmup=1 would give.
TEST(Racing, AQuiescingOpIsStoppedAfterEveryWindowAndWarmedBeforeTheNext) {
  auto run = [](bool quiesce, std::map<std::string, int>* stops) {
    fakes::FakeDevice dev;
    set_up(dev, 0.0);
    auto op = fakes::make_fake_op(dev, {"def", "best", "close"}, "def");
    if (quiesce) op->quiesce([stops](const Candidate& c) { ++(*stops)[c.name]; });
    TunerOptions o;
    o.decide.schedule = "racing";
    o.decide.finalists = 0;  // the race's own windows (no final race after it)
    TuneReport r;
    Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
    return r;
  };
  std::map<std::string, int> stops;
  const TuneReport plain = run(false, nullptr);
  const TuneReport quiesced = run(true, &stops);
  EXPECT_EQ(quiesced.winner_name, plain.winner_name);
  const TimingResult& p = *candidate_named(plain, "close").timing;
  const TimingResult& q = *candidate_named(quiesced, "close").timing;
  ASSERT_EQ(p.samples.size(), q.samples.size());
  const long long rounds = (static_cast<long long>(p.samples.size()) + 3) / 4;
  ASSERT_GT(rounds, 1);
  EXPECT_EQ(q.dispatches - p.dispatches, rounds - 1);  // the first round had its warmup
  EXPECT_EQ(stops["close"], 1 + rounds);               // validation run + every window
  EXPECT_GT(stops["def"], 2);                          // and the confirmation's windows
}

// A quiesce step that throws fails that candidate (launch_failed); the search goes on.
TEST(Racing, AQuiesceStepThatThrowsFailsItsCandidate) {
  fakes::FakeDevice dev;
  set_up(dev, 0.0);
  auto op = fakes::make_fake_op(dev, {"def", "best", "close"}, "def");
  op->quiesce([](const Candidate& c) {
    if (c.name == "best") throw std::runtime_error("cannot stop its threads");
  });
  TunerOptions o;
  o.decide.schedule = "racing";
  TuneReport r;
  Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
  const CandidateReport& best = candidate_named(r, "best");
  EXPECT_EQ(best.outcome.status, Status::launch_failed);
  EXPECT_NE(best.outcome.message.find("cannot stop its threads"), std::string::npos)
      << best.outcome.message;
  EXPECT_EQ(r.winner_name, "close");
}

TEST(Racing, FailuresAndTiesBehaveAsInExhaustive) {
  fakes::FakeDevice dev;
  dev.behaviour["def"].seconds = 1.00e-3;
  dev.behaviour["tie"].seconds = 0.99e-3;  // inside the 2 % band: the default wins
  dev.behaviour["wrong"] = {.seconds = 1e-5, .wrong = true};
  dev.behaviour["throws"] = {.seconds = 1e-5, .throw_at_launch = true};
  auto op = fakes::make_fake_op(dev, {"def", "tie", "wrong", "throws"}, "def");
  TunerOptions o;
  o.decide.schedule = "racing";
  TuneReport r;
  Tuner(dev, o).select(*op, Key{{"n", 2}}, &r);
  EXPECT_EQ(r.winner_name, "def");
  EXPECT_EQ(candidate_named(r, "wrong").outcome.status, Status::validation_failed);
  EXPECT_EQ(candidate_named(r, "throws").outcome.status, Status::launch_failed);
}

}  // namespace
}  // namespace tunekit
