// Tests for src/validate/output_check.cpp: poison and the op's hooks around a checked run, the
// comparison and the hooks' verdicts, and Reference::check built on it.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/validate.hpp"

namespace tunekit {
namespace {

// A workload of one f32 output and one i32 output; its candidates and hooks are scripted.
class ScriptedWorkload final : public Workload {
 public:
  std::vector<float> y = std::vector<float>(4, 0.0f);
  std::vector<std::int32_t> counts = std::vector<std::int32_t>(2, 0);
  std::function<void(ScriptedWorkload&)> candidate = [](ScriptedWorkload& w) { w.right(); };
  std::function<void()> poison_hook = [] {};
  std::function<std::optional<std::string>()> check_hook = [] { return std::nullopt; };
  int before_calls = 0;
  int after_calls = 0;

  void right() {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i) * 0.5f;
    counts = {3, -4};
  }
  Outcome build_candidate(std::size_t) override { return Outcome::success(); }
  void run_candidate(std::size_t) override { candidate(*this); }
  void run_reference() override { right(); }
  std::vector<OutputView> outputs() override {
    return {OutputView::of(std::span(y)), OutputView::of(std::span(counts))};
  }
  void before_check() override {
    ++before_calls;
    poison_hook();
  }
  std::optional<std::string> after_check() override {
    ++after_calls;
    return check_hook();
  }
};

Reference reference_of(ScriptedWorkload& w) {
  return Reference::capture(w, /*has_reference=*/true, 0);
}

TEST(OutputCheck, ArmPoisonsAndRunsThePoisonHook) {
  ScriptedWorkload w;
  const Reference ref = reference_of(w);
  EXPECT_EQ(w.before_calls, 1);  // the reference ran on an armed workload too
  OutputCheck check(w, ref, Tolerance{});
  w.right();
  check.arm();
  EXPECT_EQ(w.before_calls, 2);
  for (float x : w.y) EXPECT_TRUE(std::isnan(x));
  for (std::int32_t c : w.counts) EXPECT_EQ(static_cast<std::uint32_t>(c), 0xa5a5a5a5u);
}

TEST(OutputCheck, VerifyPassesARightRunAndRunsTheCheckHook) {
  ScriptedWorkload w;
  const Reference ref = reference_of(w);
  OutputCheck check(w, ref, Tolerance{});
  check.arm();
  w.run_candidate(0);
  EXPECT_TRUE(check.verify().ok());
  EXPECT_EQ(w.after_calls, 1);
  // Armed and verified again, for a sampled timing launch.
  check.arm();
  w.run_candidate(0);
  EXPECT_TRUE(check.verify().ok());
}

TEST(OutputCheck, AnElementTheCandidateSkippedFails) {
  ScriptedWorkload w;
  const Reference ref = reference_of(w);
  OutputCheck check(w, ref, Tolerance{});
  w.candidate = [](ScriptedWorkload& s) {
    s.right();
    s.counts[1] = static_cast<std::int32_t>(0xa5a5a5a5u);  // left as poisoned
  };
  check.arm();
  w.run_candidate(0);
  const Outcome out = check.verify();
  EXPECT_EQ(out.status, Status::validation_failed);
  EXPECT_NE(out.message.find("output 1[1]"), std::string::npos) << out.message;
  EXPECT_EQ(w.after_calls, 0);  // the hook runs on outputs that matched only
}

TEST(OutputCheck, AnIntermittentNaNIsCaughtOnTheRunItHappens) {
  ScriptedWorkload w;
  const Reference ref = reference_of(w);
  OutputCheck check(w, ref, Tolerance{1e300, 1e300});  // NaN passes no tolerance
  int calls = 0;
  w.candidate = [&calls](ScriptedWorkload& s) {
    s.right();
    if (++calls % 5 == 0) s.y[2] = std::nanf("");
  };
  std::vector<bool> passed;
  for (int run = 0; run < 5; ++run) {
    check.arm();
    w.run_candidate(0);
    passed.push_back(check.verify().ok());
  }
  EXPECT_EQ(passed, (std::vector<bool>{true, true, true, true, false}));
}

TEST(OutputCheck, TheCheckHooksErrorTextFails) {
  ScriptedWorkload w;
  const Reference ref = reference_of(w);
  OutputCheck check(w, ref, Tolerance{});
  w.check_hook = [] { return std::optional<std::string>("rows are not sorted"); };
  check.arm();
  w.run_candidate(0);
  const Outcome out = check.verify();
  EXPECT_EQ(out.status, Status::validation_failed);
  EXPECT_NE(out.message.find("rows are not sorted"), std::string::npos) << out.message;
}

TEST(OutputCheck, AHookThatThrowsIsAValidationFailureWithItsText) {
  ScriptedWorkload w;
  const Reference ref = reference_of(w);
  OutputCheck check(w, ref, Tolerance{});
  w.poison_hook = [] { throw std::runtime_error("cannot poison the side buffer"); };
  check.arm();  // does not throw: verify reports it
  w.run_candidate(0);
  Outcome out = check.verify();
  EXPECT_EQ(out.status, Status::validation_failed);
  EXPECT_NE(out.message.find("cannot poison the side buffer"), std::string::npos) << out.message;

  w.poison_hook = [] {};
  w.check_hook = []() -> std::optional<std::string> { throw std::logic_error("bad state"); };
  check.arm();
  w.run_candidate(0);
  out = check.verify();
  EXPECT_EQ(out.status, Status::validation_failed);
  EXPECT_NE(out.message.find("bad state"), std::string::npos) << out.message;
}

TEST(OutputCheck, FatalErrorFromAHookPropagates) {
  ScriptedWorkload w;
  const Reference ref = reference_of(w);
  OutputCheck check(w, ref, Tolerance{});
  w.check_hook = []() -> std::optional<std::string> { throw FatalError("invariant"); };
  check.arm();
  w.run_candidate(0);
  EXPECT_THROW(check.verify(), FatalError);
  w.check_hook = [] { return std::nullopt; };
  w.poison_hook = [] { throw FatalError("invariant"); };
  EXPECT_THROW(check.arm(), FatalError);
}

TEST(OutputCheck, ReferenceCheckUsesTheHooks) {
  ScriptedWorkload w;
  const Reference ref = reference_of(w);
  w.check_hook = [] { return std::optional<std::string>("checksum column wrong"); };
  const Outcome out = ref.check(w, 0, Tolerance{});
  EXPECT_EQ(out.status, Status::validation_failed);
  EXPECT_NE(out.message.find("checksum column wrong"), std::string::npos) << out.message;
  EXPECT_EQ(w.before_calls, 2);  // capture, then the check

  w.check_hook = [] { return std::nullopt; };
  w.candidate = [](ScriptedWorkload&) { throw std::runtime_error("launch refused"); };
  EXPECT_EQ(ref.check(w, 0, Tolerance{}).status, Status::launch_failed);
}

// Through Op<Args>: the Bound workload forwards the op's validator to OutputCheck.
TEST(OutputCheck, AnOpsValidatorRunsThroughItsWorkload) {
  struct Args {
    std::vector<float> y = std::vector<float>(3, 0.0f);
    std::vector<float> side = std::vector<float>(1, 0.0f);  // state no OutputView covers
  };
  Op<Args> op("hooked", 1);
  op.candidate("writes_side",
               [](Args& a) {
                 a.y = {1.0f, 2.0f, 3.0f};
                 a.side[0] = 1.0f;
               })
      .candidate("skips_side",
                 [](Args& a) {
                   a.y = {1.0f, 2.0f, 3.0f};
                 })
      .inputs([](const Key&) { return Args{}; })
      .outputs([](Args& a) { return std::vector<OutputView>{OutputView::of(std::span(a.y))}; })
      .validator([](Args& a) { a.side[0] = std::nanf(""); },
                 [](const Args& a) -> std::optional<std::string> {
                   if (std::isnan(a.side[0])) return "side was not written";
                   return std::nullopt;
                 });
  auto w = op.make_workload(Key{});
  const Reference ref = Reference::capture(*w, false, 0);
  EXPECT_TRUE(ref.check(*w, 0, Tolerance{}).ok());
  const Outcome out = ref.check(*w, 1, Tolerance{});
  EXPECT_EQ(out.status, Status::validation_failed);
  EXPECT_NE(out.message.find("side was not written"), std::string::npos) << out.message;
}

}  // namespace
}  // namespace tunekit
