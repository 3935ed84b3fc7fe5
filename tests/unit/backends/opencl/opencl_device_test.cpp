// OpenclDevice through the Tuner: a candidate with a syntax error is compile_failed with the
// build log, one with a work-group over the device limit is a classified launch failure, and
// the search goes on to pick a validated winner timed on the event clock. A space op's build
// step runs through the trial's build() before the candidate's first launch, so no launch
// compiles.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/opencl/opencl_support.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::opencl {
namespace {

constexpr std::string_view kScale = R"(
__kernel void scale(__global const float* x, __global float* y) {
  const int i = get_global_id(0);
  y[i] = 2.0f * x[i];
})";
constexpr std::string_view kBroken = R"(
__kernel void scale(__global const float* x, __global float* y) {
  y[get_global_id(0)] = 2.0f * x[get_global_id(0)]   // missing ';'
})";
// Skips every other element: must fail validation (the poison reaches the device).
constexpr std::string_view kSkips = R"(
__kernel void scale(__global const float* x, __global float* y) {
  const int i = get_global_id(0);
  if (i % 2 == 0) y[i] = 2.0f * x[i];
})";

constexpr std::size_t kN = 4096;

struct State {
  explicit State(std::shared_ptr<Context> c)
      : context(std::move(c)),
        x(kN, 0.0f),
        y(kN, 0.0f),
        xb(*context, kN * sizeof(float)),
        yb(*context, kN * sizeof(float)) {
    for (std::size_t i = 0; i < kN; ++i) x[i] = static_cast<float>(i % 97) - 48.0f;
    xb.write(x.data(), kN * sizeof(float));
  }
  std::shared_ptr<Context> context;
  std::vector<float> x, y;
  Buffer xb, yb;
  bool exposed = false;
};
struct Args {
  std::shared_ptr<State> s;
};

auto launcher(std::string_view source, std::size_t local) {
  return [source, local](Args& a) {
    if (a.s->exposed) a.s->yb.write(a.s->y.data(), kN * sizeof(float));  // poison to device
    a.s->exposed = false;
    Kernel k = a.s->context->kernel(source, "", "scale");
    k.set_arg(0, a.s->xb);
    k.set_arg(1, a.s->yb);
    const std::size_t global[1] = {kN};
    const std::size_t local_size[1] = {local};
    k.launch(global, local_size);
  };
}

std::unique_ptr<Op<Args>> scale_op(const std::shared_ptr<Context>& context) {
  auto op = std::make_unique<Op<Args>>("cl_scale_test", 1);
  const std::size_t over = context->info().max_work_group * 2;
  op->key([](const Args&) {
      return Key{{"n", static_cast<std::int64_t>(kN)}};
    })
      .inputs([context](const Key&) { return Args{std::make_shared<State>(context)}; })
      .outputs([](Args& a) {
        a.s->yb.read(a.s->y.data(), kN * sizeof(float));
        a.s->exposed = true;
        return std::vector<OutputView>{OutputView::of(std::span(a.s->y))};
      })
      .reference([](Args& a) {
        for (std::size_t i = 0; i < kN; ++i) a.s->y[i] = 2.0f * a.s->x[i];
        a.s->yb.write(a.s->y.data(), kN * sizeof(float));
        a.s->exposed = false;
      })
      .candidate("wg64", launcher(kScale, 64))
      .candidate("syntax_error", launcher(kBroken, 64))
      .candidate("wg_over_limit", launcher(kScale, over))
      .candidate("skips_elements", launcher(kSkips, 64))
      .candidate("wg128", launcher(kScale, 128))
      .default_candidate("wg64");
  return op;
}

const CandidateReport& find(const TuneReport& r, const std::string& name) {
  for (const CandidateReport& c : r.candidates)
    if (c.name == name) return c;
  throw std::runtime_error("no candidate " + name);
}

TEST(OpenclDevice, FailuresAreClassifiedAndTheTuneContinues) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  auto op = scale_op(context);
  OpenclDevice device(context);
  TunerOptions options;
  options.decide.confirm_pairs = 0;
  options.measure.timing.repeats_floor = 4;
  options.measure.timing.max_runs = 8;
  // A real clock on a loaded CI machine: the contention refusal is tested with scripted clocks.
  options.measure.timing.contended_fraction = 1.0;
  Tuner tuner(device, options);
  TuneReport report;
  tuner.select(*op, Key{{"n", static_cast<std::int64_t>(kN)}}, &report);

  const CandidateReport& broken = find(report, "syntax_error");
  EXPECT_EQ(broken.outcome.status, Status::compile_failed) << broken.outcome.message;
  EXPECT_NE(broken.outcome.message.find("OpenCL build failed"), std::string::npos);
  EXPECT_NE(broken.outcome.message.find("error"), std::string::npos);  // the build log

  const CandidateReport& over = find(report, "wg_over_limit");
  EXPECT_EQ(over.outcome.status, Status::launch_failed) << over.outcome.message;
  EXPECT_NE(over.outcome.message.find("work-group size"), std::string::npos);

  const CandidateReport& skips = find(report, "skips_elements");
  EXPECT_EQ(skips.outcome.status, Status::validation_failed) << skips.outcome.message;

  const CandidateReport& good = find(report, "wg64");  // the default, measured first
  ASSERT_EQ(good.outcome.status, Status::ok) << good.outcome.message;
  ASSERT_TRUE(good.timing.has_value());
  EXPECT_EQ(good.timing->clock, "opencl_events");
  EXPECT_GT(good.timing->median, 0);
  // Validated and timed after the failures (it may be cut as hopeless on a noisy machine).
  const CandidateReport& later = find(report, "wg128");
  EXPECT_TRUE(later.outcome.status == Status::ok || later.outcome.status == Status::hopeless)
      << later.outcome.message;
  EXPECT_TRUE(later.timing.has_value());
  EXPECT_EQ(report.source, Source::searched);
  EXPECT_TRUE(report.winner_name == "wg64" || report.winner_name == "wg128") << report.winner_name;
}

// A space op (WG x SRC) whose build step compiles through the context's cache; every launch
// counts the programs the cache built during it (none, when the build step ran first).
struct SpaceProbe {
  std::size_t builds_in_launches = 0;
  std::atomic<std::size_t> build_steps{0};
};

std::unique_ptr<Op<Args>> scale_space_op(const std::shared_ptr<Context>& context,
                                         std::shared_ptr<SpaceProbe> probe) {
  auto source = [](const Config& c) { return c["SRC"].as_string() == "good" ? kScale : kBroken; };
  auto options = [](const Config& c) {
    return "-DSPACE_TEST=1 -DWG=" + std::to_string(c["WG"].as_int());
  };
  Space space;
  space.param("WG", {32, 64, 128}).param("SRC", {"good", "broken"});
  auto op = std::make_unique<Op<Args>>("cl_scale_space_test", 1);
  op->key([](const Args&) {
      return Key{{"n", static_cast<std::int64_t>(kN)}};
    })
      .inputs([context](const Key&) { return Args{std::make_shared<State>(context)}; })
      .outputs([](Args& a) {
        a.s->yb.read(a.s->y.data(), kN * sizeof(float));
        a.s->exposed = true;
        return std::vector<OutputView>{OutputView::of(std::span(a.s->y))};
      })
      .reference([](Args& a) {
        for (std::size_t i = 0; i < kN; ++i) a.s->y[i] = 2.0f * a.s->x[i];
        a.s->yb.write(a.s->y.data(), kN * sizeof(float));
        a.s->exposed = false;
      })
      .space(space,
             [context, probe, source, options](const Config& c) -> std::function<void(Args&)> {
               return [context, probe, src = source(c), opts = options(c),
                       wg = static_cast<std::size_t>(c["WG"].as_int())](Args& a) {
                 if (a.s->exposed) a.s->yb.write(a.s->y.data(), kN * sizeof(float));
                 a.s->exposed = false;
                 const std::size_t before = context->compiler().stats().builds;
                 Kernel k = context->kernel(src, opts, "scale");
                 probe->builds_in_launches += context->compiler().stats().builds - before;
                 k.set_arg(0, a.s->xb);
                 k.set_arg(1, a.s->yb);
                 const std::size_t global[1] = {kN};
                 const std::size_t local[1] = {wg};
                 k.launch(global, local);
               };
             })
      .build([context, probe, source, options](const Config& c) {
        ++probe->build_steps;  // the tuner's compile pass may run on several threads
        context->kernel(source(c), options(c), "scale");  // throws compile_failed with the log
        return Outcome::success();
      })
      .default_config(Config{{"WG", 64}, {"SRC", "good"}});
  return op;
}

TEST(OpenclDevice, TheBuildStepRunsBeforeAnyLaunchSoNoLaunchCompiles) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  auto probe = std::make_shared<SpaceProbe>();
  auto op = scale_space_op(context, probe);
  OpenclDevice device(context);
  {
    // The trial's build() is the op's build step (which throws here; the tuner classifies).
    std::unique_ptr<Workload> w = op->make_workload(Key{{"n", static_cast<std::int64_t>(kN)}});
    const std::size_t before = probe->build_steps;
    EXPECT_TRUE(device.make_trial(*w, *op->find("WG=32,SRC=good"))->build().ok());
    try {
      (void)device.make_trial(*w, *op->find("WG=32,SRC=broken"))->build();
      FAIL() << "a broken program built";
    } catch (const TrialError& e) {
      EXPECT_EQ(e.status(), Status::compile_failed);
      EXPECT_NE(std::string(e.what()).find("OpenCL build failed"), std::string::npos) << e.what();
    }
    EXPECT_EQ(probe->build_steps, before + 2);
  }
  TunerOptions options;
  options.decide.confirm_pairs = 0;
  options.measure.timing.repeats_floor = 4;
  options.measure.timing.max_runs = 8;
  Tuner tuner(device, options);
  TuneReport report;
  tuner.select(*op, Key{{"n", static_cast<std::int64_t>(kN)}}, &report);
  EXPECT_EQ(probe->builds_in_launches, 0u);  // every program was built by the build step
  EXPECT_GE(probe->build_steps.load(), 6u);
  for (const CandidateReport& c : report.candidates) {
    if (c.name.find("broken") != std::string::npos) {
      EXPECT_EQ(c.outcome.status, Status::compile_failed) << c.name;
      EXPECT_FALSE(c.timing.has_value()) << c.name;  // never timed
    }
  }
  EXPECT_EQ(report.source, Source::searched);
  EXPECT_NE(report.winner_name.find("SRC=good"), std::string::npos) << report.winner_name;
}

TEST(OpenclDevice, QueuedTimingUsesTheEventClockAroundBatches) {
  TUNEKIT_OPENCL_CONTEXT_OR_SKIP(context);
  auto op = scale_op(context);
  OpenclDevice device(context);
  TunerOptions options;
  options.decide.confirm_pairs = 0;
  options.measure.timing.mode = TimingMode::queued;
  // Long enough that a launch slowed by a loaded machine or a sanitizer is still batched.
  options.measure.timing.batch_target = 0.05;
  options.measure.timing.repeats_floor = 4;
  options.measure.timing.max_runs = 6;
  options.measure.timing.contended_fraction = 1.0;  // a real clock on a loaded CI machine
  Tuner tuner(device, options);
  TuneReport report;
  tuner.select(*op, Key{{"n", static_cast<std::int64_t>(kN)}}, &report);
  const CandidateReport& good = find(report, "wg64");
  ASSERT_EQ(good.outcome.status, Status::ok) << good.outcome.message;
  EXPECT_EQ(good.timing->mode, TimingMode::queued);
  EXPECT_GT(good.timing->depth, 1);  // a ~µs kernel is batched
  EXPECT_GT(good.timing->median, 0);
}

}  // namespace
}  // namespace tunekit::opencl
