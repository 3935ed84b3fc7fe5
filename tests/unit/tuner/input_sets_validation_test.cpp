// Validation on an op's further input sets (src/tuner/trial_runner.cpp admit_phase and
// window_phase, SearchContext::more_sets_over): admission validates every candidate on the first
// set; the further sets are validated with the checked calls of the candidates that could win,
// so a candidate that cannot be chosen costs no run on them — except the default, a candidate
// whose validation run may put it far behind (two cold readings cut it before its window), and
// every candidate when no checked calls run.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/report_lookup.hpp"
#include "isolate/trial_messages.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"
#include "tunekit/validate.hpp"
#include "tuner/trial_runner.hpp"

namespace tunekit {
namespace {

using fakes::FakeDevice;
using testing::candidate_named;

struct SetArgs {
  int set = 0;
  std::vector<float> out;
};

// Candidates by name and per-launch seconds; those in `wrong_on_second` write a wrong value on
// the second input set only. Counts each candidate's launches on the second set.
struct TwoSetOp {
  FakeDevice dev;
  std::map<std::string, int> second_set_runs;
  std::unique_ptr<Op<SetArgs>> op = std::make_unique<Op<SetArgs>>("two_sets", 1);

  TwoSetOp(const std::map<std::string, double>& seconds,
           const std::vector<std::string>& wrong_on_second) {
    op->inputs([](const Key& k, int set) {
        return SetArgs{set, std::vector<float>(static_cast<std::size_t>(k.integer("n")))};
      })
        .outputs([](SetArgs& a) { return std::vector<OutputView>{OutputView::of(a.out)}; })
        .reference([](SetArgs& a) {
          for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
        });
    for (const auto& [name, t] : seconds) {
      dev.behaviour[name].seconds = t;
      const bool wrong =
          std::find(wrong_on_second.begin(), wrong_on_second.end(), name) != wrong_on_second.end();
      op->candidate(name, [this, name, wrong](SetArgs& a) {
        dev.running = name;
        if (a.set == 1) ++second_set_runs[name];
        for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
        if (wrong && a.set == 1) a.out[0] = 42;
      });
    }
    op->default_candidate("def");
  }

  // In process (the launch counts are this process's) unless the caller asks for workers.
  TuneReport tune(TunerOptions o = {}) {
    o.persist.store = "none";
    if (o.measure.isolation.mode == IsolationOptions::Mode::automatic)
      o.measure.isolation.mode = IsolationOptions::Mode::in_process;
    TuneReport r;
    Tuner(dev, o).select(*op, Key{{"n", 8}}, &r);
    return r;
  }
};

TEST(InputSetsValidation, ACandidateThatCouldWinIsValidatedOnEverySetBeforeItIsChosen) {
  TwoSetOp t({{"def", 2e-3}, {"liar", 1e-3}, {"good", 1.2e-3}}, {"liar"});
  const TuneReport r = t.tune();
  const CandidateReport& liar = candidate_named(r, "liar");
  EXPECT_EQ(liar.outcome.status, Status::validation_failed) << liar.outcome.message;
  EXPECT_NE(liar.outcome.message.find("input set 2"), std::string::npos) << liar.outcome.message;
  EXPECT_EQ(r.winner_name, "good") << r.reason;
  EXPECT_TRUE(candidate_named(r, "good").checked);
  EXPECT_EQ(t.second_set_runs["good"], 1);
  EXPECT_EQ(t.second_set_runs["def"], 1);  // the default: at admission, whatever it reads
}

TEST(InputSetsValidation, ALoserThatCannotBeChosenCostsNoRunOnTheFurtherSets) {
  TwoSetOp t({{"def", 2e-3}, {"fast", 1e-3}, {"slow_liar", 1.5e-3}}, {"slow_liar"});
  const TuneReport r = t.tune();
  const CandidateReport& slow = candidate_named(r, "slow_liar");
  EXPECT_TRUE(slow.outcome.ok()) << slow.outcome.message;  // measured, ranked, never checked
  EXPECT_FALSE(slow.checked);
  EXPECT_EQ(t.second_set_runs["slow_liar"], 0);
  EXPECT_EQ(r.winner_name, "fast");
}

TEST(InputSetsValidation, AnAuditOrNoCheckedCallsValidatesEveryCandidateOnEverySet) {
  {
    // Cut hopeless on its first window readings, before any checked call: only the audit, which
    // is to name every wrong candidate, validates it on the second set (at admission).
    TwoSetOp t({{"def", 2e-3}, {"fast", 1e-3}, {"lame_liar", 3e-3}}, {"lame_liar"});
    const TuneReport plain = t.tune();
    EXPECT_EQ(candidate_named(plain, "lame_liar").outcome.status, Status::hopeless)
        << candidate_named(plain, "lame_liar").outcome.message;
    EXPECT_EQ(t.second_set_runs["lame_liar"], 0);
    TunerOptions o;
    o.measure.check_every_candidate = true;
    const TuneReport audit = t.tune(o);
    EXPECT_EQ(candidate_named(audit, "lame_liar").outcome.status, Status::validation_failed)
        << candidate_named(audit, "lame_liar").outcome.message;
  }
  {
    TwoSetOp t({{"def", 2e-3}, {"fast", 1e-3}, {"slow_liar", 1.5e-3}}, {"slow_liar"});
    TunerOptions o;
    o.measure.check_every_candidate = true;
    const TuneReport r = t.tune(o);
    EXPECT_EQ(candidate_named(r, "slow_liar").outcome.status, Status::validation_failed);
  }
  {
    TwoSetOp t({{"def", 2e-3}, {"fast", 1e-3}, {"slow_liar", 1.5e-3}}, {"slow_liar"});
    TunerOptions o;
    o.measure.check_calls = 0;  // nothing after the windows: admission validates all sets
    const TuneReport r = t.tune(o);
    EXPECT_EQ(candidate_named(r, "slow_liar").outcome.status, Status::validation_failed);
    EXPECT_EQ(t.second_set_runs["fast"], 1);
  }
}

// A candidate whose validation run reads far behind what is known is validated on the second
// set at once: both cold readings far behind cut it before any window, as with one set.
TEST(InputSetsValidation, AFarBehindValidationRunTakesTheSecondSetAtOnceAndIsCut) {
  TwoSetOp t({{"def", 2e-3}, {"fast", 1e-3}, {"naive", 100e-3}}, {});
  const TuneReport r = t.tune();
  const CandidateReport& naive = candidate_named(r, "naive");
  EXPECT_EQ(naive.outcome.status, Status::hopeless) << naive.outcome.message;
  EXPECT_NE(naive.outcome.message.find("cut on its validation runs"), std::string::npos)
      << naive.outcome.message;
  EXPECT_EQ(t.second_set_runs["naive"], 1);
  EXPECT_EQ(r.winner_name, "fast");
}

// One validation run known not to have waited for a CPU, far behind and over lone_cut_seconds,
// cuts the candidate alone: its second set is never run (it cannot be chosen). One that waited
// takes the second set at once, as before; so does every candidate in an audit, which is to
// name every wrong one.
TEST(InputSetsValidation, AFarBehindRunThatNeverWaitedIsCutWithoutTheSecondSet) {
  for (const double waited : {0.0, 0.1}) {
    TwoSetOp t({{"def", 2e-3}, {"fast", 1e-3}, {"naive", 200e-3}}, {});
    t.dev.behaviour["naive"].waited = waited;
    const TuneReport r = t.tune();
    const CandidateReport& naive = candidate_named(r, "naive");
    EXPECT_EQ(naive.outcome.status, Status::hopeless) << naive.outcome.message;
    EXPECT_EQ(t.second_set_runs["naive"], waited == 0 ? 0 : 1) << naive.outcome.message;
    EXPECT_EQ(naive.outcome.message.find("validation run alone") != std::string::npos, waited == 0)
        << naive.outcome.message;
    EXPECT_EQ(r.winner_name, "fast");
  }
  TwoSetOp t({{"def", 2e-3}, {"fast", 1e-3}, {"naive_liar", 200e-3}}, {"naive_liar"});
  t.dev.behaviour["naive_liar"].waited = 0;
  EXPECT_EQ(candidate_named(t.tune(), "naive_liar").outcome.status, Status::hopeless);
  EXPECT_EQ(t.second_set_runs["naive_liar"], 0);
  // The same through a forked worker: the request's line and the answer's word on the clock
  // cross the process boundary (lost, it would be cut in a window, or on two runs).
  TunerOptions forked;
  forked.measure.isolation.mode = IsolationOptions::Mode::worker;
  const TuneReport w = t.tune(forked);
  EXPECT_EQ(w.isolation, "worker");
  EXPECT_NE(candidate_named(w, "naive_liar").outcome.message.find("validation run alone"),
            std::string::npos)
      << candidate_named(w, "naive_liar").outcome.message;
  TunerOptions audit;
  audit.measure.check_every_candidate = true;
  const TuneReport r = t.tune(audit);
  EXPECT_EQ(candidate_named(r, "naive_liar").outcome.status, Status::validation_failed)
      << candidate_named(r, "naive_liar").outcome.message;
}

// What a worker answers (TrialServer, in a forked or a spawned worker alike): the further sets
// validated at admission only from the line the host sent; with the checked calls when asked;
// `validated_more` only when they passed, so a failure that is no verdict on the kernel leaves
// them to be validated again before the candidate can be chosen.
TEST(InputSetsValidation, AWorkerSaysTheFurtherSetsPassedOnlyWhenTheyRanAndPassed) {
  TwoSetOp t({{"def", 2e-3}, {"good", 1e-3}, {"liar", 1e-3}}, {"liar"});
  const Key key{{"n", 8}};
  detail::TrialInputSet set(*t.op, key, 2, 0, 0);
  set.inputs().tolerance = t.op->tolerance(key);
  set.inputs().check_calls = 2;
  detail::TrialServer server(t.dev, set.inputs());
  auto serve = [&](const detail::TrialRequest& q) {
    std::optional<detail::TrialAnswer> a = detail::decode_trial_answer(server.serve(encode(q)));
    if (!a) throw std::runtime_error("unreadable answer");
    return *a;
  };
  for (std::size_t index : {std::size_t{1}, std::size_t{2}}) {  // good, liar
    detail::TrialRequest admit;
    admit.index = index;
    admit.more_sets_over = std::numeric_limits<double>::infinity();  // left to the check
    const detail::TrialAnswer admitted = serve(admit);
    EXPECT_TRUE(admitted.outcome.ok()) << admitted.outcome.message;
    EXPECT_FALSE(admitted.validated_more);
    detail::TrialRequest window;
    window.phase = detail::TrialRequest::Phase::window;
    window.index = index;
    window.timing.warmup = 0;
    window.timing.repeats_floor = window.timing.max_runs = 2;
    window.check = window.validate_more = true;
    const detail::TrialAnswer checked = serve(window);
    EXPECT_TRUE(checked.checked);
    EXPECT_EQ(checked.validated_more, index == 1) << index;
    EXPECT_EQ(checked.outcome.ok(), index == 1) << checked.outcome.message;
  }
  EXPECT_EQ(t.second_set_runs["good"], 1);
  EXPECT_EQ(t.second_set_runs["liar"], 1);
  // Over both lines: a run the clock knows clean is one reading enough (the host cuts it on
  // it), one the clock cannot tell of is not; from 0 the sets run at once whatever it read.
  for (const double waited : {0.0, -1.0}) {
    t.dev.behaviour["liar"].waited = waited;
    detail::TrialRequest lone;
    lone.index = 2;
    lone.more_sets_over = lone.lone_cut_over = 1e-4;
    lone.wait_tolerance = 0.02;
    const detail::TrialAnswer a = serve(lone);
    EXPECT_EQ(a.validation_call_clean, waited == 0);
    EXPECT_EQ(a.outcome.ok(), waited == 0) << a.outcome.message;
  }
  EXPECT_EQ(t.second_set_runs["liar"], 2);
  t.dev.behaviour["liar"].waited = 0;
  detail::TrialRequest admit;  // from 0: at once
  admit.lone_cut_over = 1e-4;
  admit.index = 2;
  const detail::TrialAnswer now = serve(admit);
  EXPECT_EQ(now.outcome.status, Status::validation_failed);
  EXPECT_FALSE(now.validated_more);
  EXPECT_EQ(t.second_set_runs["liar"], 3);
}

}  // namespace
}  // namespace tunekit
