// Tests for src/stack/stack_controller.cpp: selection by paired score, execute once, bans,
// modes, counters and the bounded report (timing is scripted: no real time is asserted).
#include "tunekit/stack.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "unit/stack/stack_test_support.hpp"

namespace tunekit::stack {
namespace {

using test::make_problem;
using test::make_runner;
using test::make_set;
using test::options_with;

TEST(StackController, SelectsTheCandidateTheScoreSaysIsFaster) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  const Problem p = make_problem();
  const CandidateSet set = make_set({"slow", "fast"});
  Selection s = c.select(p, set);
  EXPECT_EQ(s.candidate, "fast");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.source, DecisionSource::tuned);
  EXPECT_FALSE(s.reference);
  std::optional<StackReport> r = c.report(p, set);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->selected, "fast");
  ASSERT_EQ(r->entries.size(), 3u);
  EXPECT_EQ(r->entries[0].status, EntryStatus::reference);
  EXPECT_EQ(r->entries[1].status, EntryStatus::scored);  // as fast as the reference: a tie
  EXPECT_EQ(r->entries[2].status, EntryStatus::selected);
  EXPECT_DOUBLE_EQ(r->entries[2].ratio, 0.5);
  EXPECT_EQ(r->entries[2].pairs, 8);
  EXPECT_EQ(r->cache_key, cache_key(p, set));
  EXPECT_EQ(r->workload_digest, p.workload_digest());
  // Decided once: the second request is a hit and runs no trial.
  const int trials = runner->total();
  Selection again = c.select(p, set);
  EXPECT_EQ(again.candidate, "fast");
  EXPECT_EQ(again.source, DecisionSource::hit);
  EXPECT_EQ(runner->total(), trials);
}

TEST(StackController, PairsAlternateABBA) {
  auto runner = make_runner();
  StackOptions o = options_with(runner);
  o.policy.samples = 4;
  StackController c(o);
  (void)c.select(make_problem(), make_set({"fast"}));
  // The reference's own trial (what the others are validated against), the candidate's
  // validation trial, then the pairs: R F, F R, R F, F R.
  const std::vector<std::string> expected{"reference", "fast",      "reference", "fast",
                                          "fast",      "reference", "reference", "fast",
                                          "fast",      "reference"};
  EXPECT_EQ(runner->order(), expected);
}

TEST(StackController, TiesAndNoScoresKeepTheReference) {
  auto runner = make_runner();
  runner->seconds = [](const std::string& name, int n) {
    if (name == "close") return 0.99;  // inside the 2 % tie band
    if (name == "noisy") return n % 2 ? 0.2 : 1.8;
    return 1.0;
  };
  StackController c(options_with(runner));
  const Problem p = make_problem();
  Selection tie = c.select(p, make_set({"close"}));
  EXPECT_TRUE(tie.reference);
  EXPECT_EQ(tie.source, DecisionSource::tuned);
  Selection noisy = c.select(p, make_set({"noisy"}));
  EXPECT_TRUE(noisy.reference);
  EXPECT_EQ(noisy.source, DecisionSource::no_score);
  std::optional<StackReport> r = c.report(p, make_set({"noisy"}));
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->entries[1].failure);
  EXPECT_EQ(r->entries[1].failure->kind, FailureKind::no_score);
  EXPECT_NE(r->entries[1].why.find("too noisy"), std::string::npos) << r->entries[1].why;
}

// Spread that cannot carry a candidate across the tie band's bar is not doubt: every pair far
// ahead, however scattered, is a score (stats::paired_score's sign test).
TEST(StackController, ANoisyCandidateWhosePairsAllAgreeIsScoredAndSelected) {
  auto runner = make_runner();
  runner->seconds = [](const std::string& name, int n) {
    if (name == "far") return n % 2 ? 0.02 : 0.08;  // relative MAD 0.6, all under 0.98
    return 1.0;
  };
  StackController c(options_with(runner));
  Selection s = c.select(make_problem(), make_set({"far"}));
  EXPECT_FALSE(s.reference);
}

TEST(StackController, InfiniteOrZeroReadingsAreNoScoreNotASpeedup) {
  auto runner = make_runner();
  runner->seconds = [](const std::string& name, int) { return name == "fast" ? 0.0 : 1.0; };
  StackController c(options_with(runner));
  Selection s = c.select(make_problem(), make_set({"fast"}));
  EXPECT_TRUE(s.reference);
  EXPECT_EQ(s.source, DecisionSource::no_score);
}

TEST(StackController, RejectsIneligibleAndOversizedCandidatesWithoutRunningThem) {
  auto runner = make_runner();
  StackOptions o = options_with(runner);
  o.scratch_limit = 1024;
  StackController c(o);
  CandidateSet set = make_set({"fast", "big"});
  set.candidates[1].eligible = [](const Problem& p) -> std::optional<std::string> {
    if (p.signature.integer("tokens") > 256) return "tokens over 256";
    return std::nullopt;
  };
  set.candidates[2].scratch_bytes = 4096;
  Selection s = c.select(make_problem(), set);
  EXPECT_TRUE(s.reference);
  EXPECT_EQ(s.source, DecisionSource::only_reference);
  EXPECT_EQ(runner->trials("fast"), 0);
  EXPECT_EQ(runner->trials("big"), 0);
  std::optional<StackReport> r = c.report(make_problem(), set);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->entries[1].failure->kind, FailureKind::ineligible);
  EXPECT_EQ(r->entries[1].failure->text(), "ineligible: tokens over 256");
  EXPECT_EQ(r->entries[2].failure->kind, FailureKind::scratch_over_limit);
  EXPECT_EQ(c.stats().rejections, 2u);
}

TEST(StackController, AWrongCandidateFailsValidationHoweverFast) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  CandidateSet set = make_set({});
  set.candidates.push_back(
      fakes::doubling("fast", [](fakes::FloatWorkspace& w) { w.out[3] += 1; }));
  Selection s = c.select(make_problem(), set);
  EXPECT_TRUE(s.reference);
  std::optional<StackReport> r = c.report(make_problem(), set);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->entries[1].status, EntryStatus::failed);
  EXPECT_EQ(r->entries[1].failure->kind, FailureKind::validation_failed);
  EXPECT_NE(r->entries[1].why.find("element 3"), std::string::npos) << r->entries[1].why;
  EXPECT_EQ(runner->trials("fast"), 1);  // validated once, never timed
}

TEST(StackController, EveryTrialGetsFreshPoisonedState) {
  auto runner = make_runner();
  int made = 0, reused = 0, unpoisoned = 0;
  Problem p = make_problem();
  p.make_workspace = [&made] {
    ++made;
    return std::make_unique<fakes::FloatWorkspace>(8);
  };
  CandidateSet set = make_set({"fast"});
  for (StackCandidate& cand : set.candidates) {
    auto run = cand.run;
    cand.run = [&, run](Workspace& w, std::span<std::byte> s) {
      auto& f = static_cast<fakes::FloatWorkspace&>(w);
      reused += f.runs;
      unpoisoned += std::isnan(f.out[0]) ? 0 : 1;
      run(w, s);
    };
  }
  StackController c(options_with(runner));
  Selection s = c.select(p, set);
  EXPECT_EQ(s.candidate, "fast");
  EXPECT_EQ(made, runner->total());
  EXPECT_EQ(reused, 0);
  EXPECT_EQ(unpoisoned, 0);
}

TEST(StackController, ACandidateThatSkipsOutputsFailsValidation) {
  // Inputs of 0: the right outputs are 0, the value a fresh buffer holds. Only the poison
  // before each trial shows that `lazy` never wrote them.
  auto runner = make_runner();
  Problem p = make_problem();
  p.make_workspace = [] { return std::make_unique<fakes::FloatWorkspace>(8, 0.0f); };
  CandidateSet set = make_set({});
  StackCandidate lazy;
  lazy.name = "fast";
  lazy.run = [](Workspace&, std::span<std::byte>) {};
  set.candidates.push_back(lazy);
  StackController c(options_with(runner));
  EXPECT_TRUE(c.select(p, set).reference);
  EXPECT_EQ(c.report(p, set)->entries[1].failure->kind, FailureKind::validation_failed);
}

TEST(StackController, AnExecutionErrorInvalidatesBansAndIsNotReExecuted) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  const Problem p = make_problem();
  CandidateSet set = make_set({});
  int live_fast = 0, live_reference = 0;
  StackCandidate fast = fakes::doubling("fast");
  auto fast_run = fast.run;
  fast.run = [&, fast_run](Workspace& w, std::span<std::byte> s) {
    fast_run(w, s);
    if (!StackController::is_tuning()) {
      ++live_fast;
      throw std::runtime_error("device fault");
    }
  };
  auto ref_run = set.candidates[0].run;
  set.candidates[0].run = [&, ref_run](Workspace& w, std::span<std::byte> s) {
    ref_run(w, s);
    if (!StackController::is_tuning()) ++live_reference;
  };
  set.candidates.push_back(fast);
  fakes::FloatWorkspace request(64);
  EXPECT_THROW(
      {
        try {
          c.try_execute(p, set, request);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "device fault");  // unchanged
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(live_fast, 1);
  EXPECT_EQ(live_reference, 0);  // never replayed on another candidate
  EXPECT_EQ(c.banned(p, set), std::vector<std::string>{"fast"});
  Stats st = c.stats();
  EXPECT_EQ(st.bans, 1u);
  EXPECT_EQ(st.invalidations, 1u);
  // The next request re-decides without it: the reference, and the request runs on it once.
  const int before = runner->trials("fast");
  Selection s = c.try_execute(p, set, request);
  EXPECT_TRUE(s.reference);
  EXPECT_EQ(s.source, DecisionSource::only_reference);
  EXPECT_EQ(runner->trials("fast"), before);
  EXPECT_EQ(live_reference, 1);
  EXPECT_EQ(c.report(p, set)->entries[1].status, EntryStatus::banned);
  EXPECT_EQ(c.report(p, set)->entries[1].failure->text(),
            "banned: failed a live execution: device fault");
}

TEST(StackController, TryExecuteRunsTheRequestOnceOnTheSelection) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  fakes::FloatWorkspace request(64, 3.0f);
  Selection s = c.try_execute(make_problem(), make_set({"fast"}), request);
  EXPECT_EQ(s.candidate, "fast");
  EXPECT_FLOAT_EQ(request.out[0], 6.0f);
  EXPECT_EQ(request.runs, 1);  // executed once, on the selection
}

TEST(StackController, ModesDisabledAndCacheOnlyNeverTune) {
  auto runner = make_runner();
  StackController off(options_with(runner, Mode::disabled));
  Selection a = off.select(make_problem(), make_set());
  EXPECT_EQ(a.source, DecisionSource::disabled);
  EXPECT_TRUE(a.reference);
  StackController cached(options_with(runner, Mode::cache_only));
  Selection b = cached.select(make_problem(), make_set());
  EXPECT_EQ(b.source, DecisionSource::cache_only_miss);
  EXPECT_TRUE(b.reference);
  EXPECT_EQ(runner->total(), 0);
}

TEST(StackController, MissingMetadataIsAUsageErrorBeforeAnythingRuns) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  fakes::FloatWorkspace request(64);
  auto expect_usage = [&](const Problem& p, const CandidateSet& set, const char* says) {
    try {
      c.try_execute(p, set, request);
      ADD_FAILURE() << "no error for: " << says;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  CandidateSet no_ref = make_set();
  no_ref.reference.reset();
  expect_usage(make_problem(), no_ref, "no reference");
  CandidateSet out_of_range = make_set();
  out_of_range.reference = 5;
  expect_usage(make_problem(), out_of_range, "out of range");
  Problem unsigned_problem = make_problem();
  unsigned_problem.signature = Key{};
  expect_usage(unsigned_problem, make_set(), "signature is empty");
  Problem unnamed = make_problem("");
  expect_usage(unnamed, make_set(), "no name");
  Problem no_workspace = make_problem();
  no_workspace.make_workspace = nullptr;
  expect_usage(no_workspace, make_set(), "make_workspace");
  CandidateSet twice = make_set({"reference"});
  expect_usage(make_problem(), twice, "two candidates");
  CandidateSet no_run = make_set();
  no_run.candidates[1].run = nullptr;
  expect_usage(make_problem(), no_run, "no run function");
  Problem blind = make_problem();
  blind.tolerance.max_readback_elements = 0;
  expect_usage(blind, make_set(), "compare nothing");
  Problem negative = make_problem();
  negative.tolerance.rel = -1;
  expect_usage(negative, make_set(), ">= 0");
  EXPECT_EQ(runner->total(), 0);
  EXPECT_EQ(request.runs, 0);  // the request never ran
  Stats st = c.stats();
  EXPECT_EQ(st.misses + st.hits + st.fallbacks, 0u);
}

TEST(StackController, StatsCountEveryPath) {
  auto runner = make_runner();
  StackOptions o = options_with(runner);
  o.scratch_limit = 16;
  StackController c(o);
  const Problem p = make_problem();
  CandidateSet set = make_set({"fast", "big"});
  set.candidates[2].scratch_bytes = 64;
  (void)c.select(p, set);  // miss, tune, one rejection
  (void)c.select(p, set);  // hit
  EXPECT_TRUE(c.invalidate(p, set));
  Stats st = c.stats();
  EXPECT_EQ(st.misses, 1u);
  EXPECT_EQ(st.tunes, 1u);
  EXPECT_EQ(st.hits, 1u);
  EXPECT_EQ(st.rejections, 1u);
  EXPECT_EQ(st.invalidations, 1u);
  EXPECT_EQ(st.fallbacks, 0u);
  EXPECT_EQ(st.bans, 0u);
  StackController cached(options_with(runner, Mode::cache_only));
  (void)cached.select(p, set);
  EXPECT_EQ(cached.stats().misses, 1u);
  EXPECT_EQ(cached.stats().fallbacks, 1u);
  EXPECT_EQ(cached.stats().tunes, 0u);
}

TEST(StackController, TheReportIsBoundedAndSaysSo) {
  auto runner = make_runner();
  StackOptions o = options_with(runner);
  o.report_entries = 4;
  o.policy.samples = 2;
  StackController c(o);
  std::vector<std::string> names;
  for (int i = 0; i < 9; ++i) names.push_back("alt" + std::to_string(i));
  names.push_back("fast");  // the selection comes last but is always kept
  const CandidateSet set = make_set(names);
  ASSERT_EQ(c.select(make_problem(), set).candidate, "fast");
  std::optional<StackReport> r = c.report(make_problem(), set);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->entries.size(), 4u);
  EXPECT_EQ(r->entries_cut, 7u);
  EXPECT_EQ(r->entries.front().candidate, "reference");
  EXPECT_EQ(r->entries.back().candidate, "fast");
}

TEST(StackController, KeepsABoundedNumberOfReports) {
  auto runner = make_runner();
  StackOptions o = options_with(runner);
  o.reports = 2;
  o.policy.samples = 1;
  StackController c(o);
  for (std::int64_t t : {1, 2, 3}) (void)c.select(make_problem("block", t), make_set());
  std::vector<StackReport> kept = c.reports();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept.front().signature, make_problem("block", 2).signature.text());
}

TEST(StackController, FailureTextCombinesKindAndMessage) {
  EXPECT_EQ((Failure{FailureKind::validation_failed, "element 2 is 1, expected 0"}.text()),
            "validation_failed: element 2 is 1, expected 0");
  EXPECT_EQ(to_string(DecisionSource::cache_only_miss), "cache_only_miss");
  EXPECT_EQ(to_string(Scope::operator_), "operator");
  EXPECT_EQ(scope_from_string("application"), Scope::application);
  EXPECT_EQ(scope_from_string("kernel"), std::nullopt);
}

TEST(StackAutotune, IsOptInInstalledOnceAndCreatesNothingWhenAsked) {
  reset_stack_autotune_for_testing();
  EXPECT_EQ(stack_autotuner(), nullptr);
  EXPECT_EQ(stack_autotuner(), nullptr);  // asking installs nothing
  StackOptions o;
  o.mode = Mode::cache_only;
  StackController& installed = enable_stack_autotune(o);
  EXPECT_EQ(stack_autotuner(), &installed);
  EXPECT_EQ(installed.options().mode, Mode::cache_only);
  EXPECT_THROW(enable_stack_autotune(), UsageError);
  EXPECT_EQ(stack_autotuner(), &installed);  // the first one stands
  reset_stack_autotune_for_testing();
  EXPECT_EQ(stack_autotuner(), nullptr);
}

TEST(StackController, ATuneThatThrowsFatalUnclaimsTheProblem) {
  auto runner = make_runner();
  StackController c(options_with(runner));
  const Problem p = make_problem();
  CandidateSet set = make_set({"fast"});
  bool lost = true;
  auto run = set.candidates[1].run;
  set.candidates[1].run = [&lost, run](Workspace& w, std::span<std::byte> s) {
    if (lost) throw FatalError("device lost");
    run(w, s);
  };
  EXPECT_THROW(c.select(p, set), FatalError);  // fatal: not a candidate failure to contain
  lost = false;
  Selection s = c.select(p, set);  // tuned again, not answered as a contender
  EXPECT_EQ(s.source, DecisionSource::tuned);
  EXPECT_EQ(s.candidate, "fast");
}

TEST(StackController, APolicyWithoutPairsIsAUsageError) {
  StackOptions o;
  o.policy.samples = 0;
  EXPECT_THROW(StackController{o}, UsageError);
}

}  // namespace
}  // namespace tunekit::stack
