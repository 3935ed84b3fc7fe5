// Per-segment composition (include/tunekit/routine.hpp): each segment's kernel choice made by
// the tuner, the composition measured as a whole against the alternatives and the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/routine.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::stack {
namespace {

// A routine's workspace: one output the segments overwrite, and the scripted cost of what
// ran on it (each segment adds its candidate's seconds).
struct RoutineWorkspace final : Workspace {
  std::vector<float> out = std::vector<float>(16);
  double cost = 0;
  std::vector<OutputView> outputs() override { return {OutputView::of(out)}; }
};

// Times a trial by the cost its workspace accumulated: a scripted, noiseless measurement.
class CostRunner final : public TrialRunner {
 public:
  TrialResult run(const Problem& problem, const StackCandidate& candidate) override {
    ++trials;
    TrialResult r;
    r.workspace = problem.make_workspace();
    candidate.run(*r.workspace, {});
    r.seconds = dynamic_cast<RoutineWorkspace&>(*r.workspace).cost;
    return r;
  }
  int trials = 0;
};

class Composing : public ::testing::Test {
 protected:
  // Three segments: a's "fast" is 3× faster, b's "fast" ties its default (the default stays),
  // c's "fast" is 2× faster.
  void SetUp() override {
    seconds_ = {{"a_def", 3e-3},  {"a_fast", 1e-3}, {"b_def", 2e-3},
                {"b_fast", 2e-3}, {"c_def", 1e-3},  {"c_fast", 0.5e-3}};
    for (const auto& [name, s] : seconds_) dev_.behaviour[name].seconds = s;
    for (const std::string seg : {"a", "b", "c"}) ops_.push_back(segment_op(seg));
    runner_ = std::make_shared<CostRunner>();
  }

  std::unique_ptr<Op<fakes::FakeArgs>> segment_op(const std::string& seg) {
    auto op = std::make_unique<Op<fakes::FakeArgs>>("segment_" + seg, 1);
    op->key([](const fakes::FakeArgs& a) {
        return Key{{"n", static_cast<long>(a.out.size())}};
      })
        .inputs([](const Key& k) {
          return fakes::FakeArgs{std::vector<float>(static_cast<std::size_t>(k.integer("n")))};
        })
        .outputs([](fakes::FakeArgs& a) { return std::vector<OutputView>{OutputView::of(a.out)}; })
        .reference([](fakes::FakeArgs& a) {
          for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
        });
    for (const std::string& name : {seg + "_def", seg + "_fast"}) {
      op->candidate(name, [this, name](fakes::FakeArgs& a) {
        dev_.running = name;
        for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
      });
    }
    op->default_candidate(seg + "_def");
    return op;
  }

  Routine routine() {
    Routine r;
    r.problem.scope = Scope::graph;
    r.problem.name = "three_segments";
    r.problem.signature = Key{{"n", 16}};
    r.problem.make_workspace = [] { return std::make_unique<RoutineWorkspace>(); };
    for (std::size_t i = 0; i < ops_.size(); ++i)
      r.segments.push_back(Segment{ops_[i]->name(), ops_[i].get(), Key{{"n", 16}}});
    r.run = [this](Workspace& ws, std::span<const std::size_t> choices) {
      auto& w = dynamic_cast<RoutineWorkspace&>(ws);
      for (std::size_t i = 0; i < ops_.size(); ++i) {
        fakes::FakeArgs args{std::vector<float>(w.out.size())};
        ops_[i]->call(choices[i], args);
        w.out = args.out;
        w.cost += seconds_.at(ops_[i]->candidate(choices[i]).name);
      }
    };
    return r;
  }

  // A whole-routine alternative of a given cost.
  static StackCandidate fused(std::string name, double cost) {
    StackCandidate c;
    c.name = std::move(name);
    c.run = [cost](Workspace& ws, std::span<std::byte>) {
      auto& w = dynamic_cast<RoutineWorkspace&>(ws);
      for (std::size_t i = 0; i < w.out.size(); ++i) w.out[i] = static_cast<float>(i);
      w.cost += cost;
    };
    return c;
  }

  StackOptions stack_options() {
    StackOptions o;
    o.runner = runner_;
    return o;
  }

  fakes::FakeDevice dev_;
  std::map<std::string, double> seconds_;
  std::vector<std::unique_ptr<Op<fakes::FakeArgs>>> ops_;
  std::shared_ptr<CostRunner> runner_;
};

TEST_F(Composing, TheBestPerSegmentPicksComposeToTheMeasuredBest) {
  Tuner tuner(dev_, TunerOptions{});
  StackController controller(stack_options());
  Routine r = routine();
  r.alternatives = [](std::span<const std::size_t>) {
    return std::vector<StackCandidate>{fused("fused_slow", 5e-3)};
  };
  const Composition c = compose(tuner, controller, r);

  ASSERT_EQ(c.picks.size(), 3u);
  EXPECT_EQ(c.picks[0].candidate, "a_fast");
  EXPECT_EQ(c.picks[1].candidate, "b_def");  // a tie keeps the default
  EXPECT_TRUE(c.picks[1].is_default);
  EXPECT_EQ(c.picks[2].candidate, "c_fast");
  EXPECT_EQ(c.selection.candidate, "composed");
  EXPECT_FALSE(c.selection.reference);

  // Every combination of the segments' candidates, measured the same way: the composition
  // of the per-segment picks is the fastest of them.
  double best = std::numeric_limits<double>::infinity();
  for (int mask = 0; mask < 8; ++mask) {
    RoutineWorkspace ws;
    std::vector<std::size_t> choices;
    for (int i = 0; i < 3; ++i) choices.push_back((mask >> i) & 1);
    r.run(ws, choices);
    best = std::min(best, ws.cost);
  }
  RoutineWorkspace composed;
  std::vector<std::size_t> picked;
  for (const SegmentPick& p : c.picks) picked.push_back(p.index);
  r.run(composed, picked);
  EXPECT_DOUBLE_EQ(composed.cost, best);

  const std::optional<StackReport> report = controller.report(c.problem, c.set);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->selected, "composed");
  EXPECT_EQ(report->dependencies.size(), 3u);
}

TEST_F(Composing, AFasterWholeRoutineAlternativeBeatsTheComposition) {
  Tuner tuner(dev_, TunerOptions{});
  StackController controller(stack_options());
  Routine r = routine();
  std::vector<std::size_t> seen;
  r.alternatives = [&seen](std::span<const std::size_t> picks) {
    seen.assign(picks.begin(), picks.end());
    return std::vector<StackCandidate>{fused("fused_fast", 1e-3)};  // composed costs 3.5e-3
  };
  EXPECT_EQ(compose(tuner, controller, r).selection.candidate, "fused_fast");
  EXPECT_EQ(seen, (std::vector<std::size_t>{1, 0, 1}));  // the alternatives saw the picks
}

TEST_F(Composing, WhenEveryPickIsTheDefaultOnlyTheDefaultsAndAlternativesCompete) {
  for (const std::string seg : {"a", "c"}) seconds_[seg + "_fast"] = seconds_[seg + "_def"];
  for (const auto& [name, s] : seconds_) dev_.behaviour[name].seconds = s;
  Tuner tuner(dev_, TunerOptions{});
  StackController controller(stack_options());
  const Composition c = compose(tuner, controller, routine());
  for (const SegmentPick& p : c.picks) EXPECT_TRUE(p.is_default) << p.segment;
  ASSERT_EQ(c.set.candidates.size(), 1u);  // no "composed": it would be the reference again
  EXPECT_TRUE(c.selection.reference);
  EXPECT_EQ(c.selection.candidate, "defaults");
}

TEST_F(Composing, AChangedSegmentDecisionRedecidesTheRoutine) {
  StackController controller(stack_options());
  {
    Tuner tuner(dev_, TunerOptions{});
    const Composition c = compose(tuner, controller, routine());
    EXPECT_EQ(c.selection.source, DecisionSource::tuned);
    EXPECT_EQ(compose(tuner, controller, routine()).selection.source, DecisionSource::hit);
  }
  // A new process of the kernel tuner finds a's fast candidate slower now: a's decision
  // changes, and the routine's decision made under the old one is not served.
  seconds_["a_fast"] = 6e-3;
  dev_.behaviour["a_fast"].seconds = 6e-3;
  Tuner tuner(dev_, TunerOptions{});
  const Composition c = compose(tuner, controller, routine());
  EXPECT_EQ(c.picks[0].candidate, "a_def");
  EXPECT_EQ(c.selection.source, DecisionSource::tuned);
  EXPECT_EQ(c.selection.candidate, "composed");  // c's pick still wins
}

TEST_F(Composing, MisuseIsAUsageError) {
  Tuner tuner(dev_, TunerOptions{});
  StackController controller(stack_options());
  Routine empty = routine();
  empty.segments.clear();
  EXPECT_THROW(compose(tuner, controller, empty), UsageError);
  Routine no_run = routine();
  no_run.run = nullptr;
  EXPECT_THROW(compose(tuner, controller, no_run), UsageError);
  Routine no_op = routine();
  no_op.segments[1].op = nullptr;
  EXPECT_THROW(compose(tuner, controller, no_op), UsageError);
}

}  // namespace
}  // namespace tunekit::stack
