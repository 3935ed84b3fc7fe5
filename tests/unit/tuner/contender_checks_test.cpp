// The checked calls after a window (MeasureOptions::check_calls) run for candidates that could
// still win, and a winner not yet checked is checked before the decision stands
// (src/tuner/search_context.cpp SearchContext::window and holds). A liar here is right on its
// validation run and wrong on every later call (FakeBehaviour::right_calls).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/fake_tune.hpp"
#include "fakes/report_lookup.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using testing::candidate_named;

TuneReport tune(FakeDevice& dev, const std::vector<std::string>& names, TunerOptions o = {}) {
  return fakes::select_fake(dev, names, o);
}

void set_up(FakeDevice& dev) {
  dev.behaviour["def"] = {.seconds = 2.0e-3};
  dev.behaviour["fast"] = {.seconds = 1.0e-3};
  dev.behaviour["behind"] = {.seconds = 1.3e-3};  // 30 % behind: ranked, never chosen
  dev.behaviour["behind_liar"] = {.seconds = 1.3e-3, .right_calls = 1};
  dev.behaviour["fast_liar"] = {.seconds = 0.5e-3, .right_calls = 1};
}

TEST(ContenderChecks, OnlyACandidateThatCouldWinIsChecked) {
  FakeDevice dev;
  set_up(dev);
  TunerOptions o;
  o.decide.confirm_pairs = 0;  // every launch counted below is the search's
  const TuneReport r = tune(dev, {"def", "fast", "behind", "behind_liar", "fast_liar"}, o);
  EXPECT_EQ(r.winner_name, "fast");
  // The first reading and each new best are checked: the default, then "fast".
  EXPECT_TRUE(candidate_named(r, "def").checked);
  EXPECT_TRUE(candidate_named(r, "fast").checked);
  // The liar that would win is caught by its checked calls.
  const CandidateReport& caught = candidate_named(r, "fast_liar");
  EXPECT_EQ(caught.outcome.status, Status::validation_failed) << caught.outcome.message;
  EXPECT_NE(caught.outcome.message.find("checked call 1"), std::string::npos)
      << caught.outcome.message;
  // Behind the best by more than the tie band after its window: ranked, not checked. Its
  // launches: the validation run, the warmup and the window's samples, no checked calls.
  for (const char* behind : {"behind", "behind_liar"}) {
    const CandidateReport& c = candidate_named(r, behind);
    EXPECT_TRUE(c.outcome.ok()) << behind << ": " << c.outcome.message;
    EXPECT_FALSE(c.checked) << behind;
    ASSERT_TRUE(c.timing) << behind;
    EXPECT_EQ(dev.launches[behind], 1 + 1 + static_cast<int>(c.timing->samples.size())) << behind;
  }
  const int fast_window = static_cast<int>(candidate_named(r, "fast").timing->samples.size());
  EXPECT_EQ(dev.launches["fast"], 1 + 1 + fast_window + TunerOptions{}.measure.check_calls);
}

TEST(ContenderChecks, EveryCandidateIsCheckedWhenAsked) {
  FakeDevice dev;
  set_up(dev);
  TunerOptions o;
  o.measure.check_every_candidate = true;
  const TuneReport r = tune(dev, {"def", "fast", "behind", "behind_liar", "fast_liar"}, o);
  EXPECT_EQ(r.winner_name, "fast");
  EXPECT_TRUE(candidate_named(r, "behind").checked);
  EXPECT_EQ(candidate_named(r, "behind_liar").outcome.status, Status::validation_failed);
  EXPECT_EQ(candidate_named(r, "fast_liar").outcome.status, Status::validation_failed);
}

TEST(ContenderChecks, NoChecksAskedChecksNothing) {
  FakeDevice dev;
  set_up(dev);
  TunerOptions o;
  o.measure.check_calls = 0;
  const TuneReport r = tune(dev, {"def", "fast", "behind"}, o);
  EXPECT_EQ(r.winner_name, "fast");
  for (const auto& c : r.candidates) EXPECT_FALSE(c.checked) << c.name;
}

// "drift" leads racing's first round (checked then) and slows down to 3 ms after it; "steady"
// reads 1.5 ms in every round, behind "drift" in the first: it is checked once it leads a
// round, before the decision stands. (A pick that never led a round is checked at the
// decision itself: ATiedPickThatNeverLedARoundIsCheckedAtTheDecision.)
TuneReport race_with_a_late_winner(FakeDevice& dev, bool steady_lies) {
  dev.behaviour["def"] = {.seconds = 2.0e-3};
  dev.behaviour["steady"] = {.seconds = 1.5e-3, .right_calls = steady_lies ? 1 : 0};
  dev.behaviour["drift"] = {.seconds = 1.0e-3};
  // Its validation run, the first round's warmup and 4 samples, then the leader's check (a
  // window of 2 samples and 5 checked calls): 13.
  dev.behaviour["drift"].hook = [&dev] {
    if (dev.launches["drift"] > 13) dev.behaviour["drift"].seconds = 3.0e-3;
  };
  TunerOptions o;
  o.decide.schedule = "racing";
  return tune(dev, {"def", "drift", "steady"}, o);
}

TEST(ContenderChecks, AWinnerNotYetCheckedIsCheckedBeforeTheDecisionStands) {
  FakeDevice dev;
  const TuneReport r = race_with_a_late_winner(dev, false);
  EXPECT_EQ(r.winner_name, "steady");
  const CandidateReport& steady = candidate_named(r, "steady");
  EXPECT_TRUE(steady.checked);
  EXPECT_TRUE(steady.outcome.ok()) << steady.outcome.message;
  EXPECT_TRUE(candidate_named(r, "drift").checked);
}

TEST(ContenderChecks, AWinnerThatFailsItsLateCheckIsDeclinedAndTheNextDecided) {
  FakeDevice dev;
  const TuneReport r = race_with_a_late_winner(dev, true);
  const CandidateReport& steady = candidate_named(r, "steady");
  EXPECT_EQ(steady.outcome.status, Status::validation_failed) << steady.outcome.message;
  EXPECT_FALSE(steady.winner);
  // "drift" (median 2 ms at the end) ties the default: the default stands.
  EXPECT_EQ(r.winner_name, "def");
  EXPECT_TRUE(candidate_named(r, "def").checked);
}

// A runner tied with the leader that never led is the tie order's pick ("a_tied" before
// "z_lead" by name): it is checked when the decision falls on it, and declined there if it
// fails.
TEST(ContenderChecks, ATiedPickThatNeverLedARoundIsCheckedAtTheDecision) {
  for (const bool lies : {false, true}) {
    FakeDevice dev;
    dev.behaviour["def"] = {.seconds = 2.0e-3};
    dev.behaviour["z_lead"] = {.seconds = 1.00e-3};
    dev.behaviour["a_tied"] = {.seconds = 1.01e-3, .right_calls = lies ? 1 : 0};
    TunerOptions o;
    o.decide.schedule = "racing";
    o.decide.confirm_pairs = 0;
    const TuneReport r = tune(dev, {"def", "z_lead", "a_tied"}, o);
    const CandidateReport& tied = candidate_named(r, "a_tied");
    EXPECT_TRUE(tied.checked) << lies;
    EXPECT_TRUE(candidate_named(r, "z_lead").checked) << lies;
    if (lies) {
      EXPECT_EQ(tied.outcome.status, Status::validation_failed) << tied.outcome.message;
      EXPECT_EQ(r.winner_name, "z_lead");
    } else {
      EXPECT_EQ(r.winner_name, "a_tied");
    }
  }
}

// Racing checks the leader of each round, not every runner that led the round so far when its
// window ended: here each candidate is faster than the one before it, so the rule for a
// `full` window would check every one of them.
TEST(ContenderChecks, RacingChecksTheLeaderOfEachRoundOnly) {
  FakeDevice dev;
  const std::vector<std::string> names{"def", "c1", "c2", "c3", "c4", "c5"};
  for (std::size_t k = 0; k < names.size(); ++k)
    dev.behaviour[names[k]] = {.seconds = (2.0 - 0.2 * static_cast<double>(k)) * 1e-3};
  TunerOptions o;
  o.decide.schedule = "racing";
  o.decide.confirm_pairs = 0;  // every launch counted below is the search's
  const TuneReport r = tune(dev, names, o);
  EXPECT_EQ(r.winner_name, "c5");
  EXPECT_TRUE(candidate_named(r, "c5").checked);
  for (const char* behind : {"c1", "c2", "c3", "c4"}) {
    const CandidateReport& c = candidate_named(r, behind);
    EXPECT_TRUE(c.outcome.ok()) << behind << ": " << c.outcome.message;
    EXPECT_FALSE(c.checked) << behind;
    ASSERT_TRUE(c.timing) << behind;
    // Its validation run, the first round's warmup and its samples: no checked calls.
    EXPECT_EQ(dev.launches[behind], 1 + 1 + static_cast<int>(c.timing->samples.size())) << behind;
  }
}

// A liar that leads racing's first round is checked before anyone is dropped on its reading:
// the honest runners race on among themselves (without the check they would be dropped as
// clearly behind it after their first eight samples, and the decision would fall on them on
// those alone once the liar failed at the end).
TEST(ContenderChecks, ALiarLeadingARaceIsCaughtBeforeItDropsTheOthers) {
  FakeDevice dev;
  dev.behaviour["def"] = {.seconds = 2.0e-3, .jitter = 0.02};
  dev.behaviour["fast"] = {.seconds = 1.0e-3, .jitter = 0.02};
  dev.behaviour["near"] = {.seconds = 1.03e-3, .jitter = 0.02};
  dev.behaviour["fast_liar"] = {.seconds = 0.5e-3, .jitter = 0.02, .right_calls = 1};
  TunerOptions o;
  o.decide.schedule = "racing";
  const TuneReport r = tune(dev, {"def", "fast_liar", "fast", "near"}, o);
  const CandidateReport& liar = candidate_named(r, "fast_liar");
  EXPECT_EQ(liar.outcome.status, Status::validation_failed) << liar.outcome.message;
  EXPECT_NE(liar.outcome.message.find("checked call 1"), std::string::npos) << liar.outcome.message;
  // Caught right after the first round: its validation run, the round's warmup and 4 samples,
  // the check's window of 2 samples and its first checked call, and nothing after.
  EXPECT_EQ(dev.launches["fast_liar"], 1 + 1 + 4 + 2 + 1);
  EXPECT_EQ(r.winner_name, "fast");
  for (const char* honest : {"fast", "near"})
    EXPECT_TRUE(candidate_named(r, honest).outcome.ok()) << honest;
}

}  // namespace
}  // namespace tunekit
