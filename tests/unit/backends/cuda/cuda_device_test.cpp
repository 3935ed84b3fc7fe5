// cuda_device.cpp and the window of context.cpp, on the fake driver: the start event is recorded
// lazily, after the backlog, at the window's first enqueue; a queued batch is captured into a
// graph once per depth (outside the window) and replayed; a capture the candidate breaks is
// launch_failed; the L2 evictor writes twice the L2 on the stream; time_routine runs on it.
#include <gtest/gtest.h>

#include <functional>

#include "backends/cuda/fake_driver.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/timing.hpp"

namespace tunekit::cuda {
namespace {

using testing::FakeDriver;

constexpr std::string_view kSource = R"(extern "C" __global__ void k() {})";

// One candidate whose launch is `run`.
class FakeWorkload final : public Workload {
 public:
  explicit FakeWorkload(std::function<void()> run) : run_(std::move(run)) {}
  Outcome build_candidate(std::size_t) override {
    ++builds;
    return Outcome::success();
  }
  void run_candidate(std::size_t) override { run_(); }
  void run_reference() override {}
  std::vector<OutputView> outputs() override { return {}; }
  int builds = 0;

 private:
  std::function<void()> run_;
};

struct Fixture {
  explicit Fixture(double backlog_seconds = 50e-6)
      : context(testing::open_fake_context(driver, "", options(backlog_seconds))),
        function(context->function(kSource, {}, "k")),
        workload([this] {
          function.launch({1, 1, 1}, {32, 1, 1}, 0, {});
        }) {}
  static ContextOptions options(double backlog_seconds) {
    ContextOptions o;
    o.backlog_seconds = backlog_seconds;
    return o;
  }
  int candidate_launches() const {
    int n = 0;
    for (const auto& l : driver.launches) n += l.function == "k" ? 1 : 0;
    return n;
  }
  FakeDriver driver;
  std::shared_ptr<Context> context;
  Function function;
  FakeWorkload workload;
};

TEST(CudaWindow, TheStartIsRecordedAfterTheBacklogAtTheFirstEnqueue) {
  Fixture f;
  EXPECT_GE(f.driver.find("cuModuleGetFunction tunekit_backlog_spin"), 0) << "loaded at open";
  EventClock clock(f.context);
  EXPECT_EQ(clock.name(), "cuda_events");
  clock.begin();
  EXPECT_EQ(f.driver.calls("cuEventRecord"), 0) << "nothing is recorded on an idle stream";
  char data[4] = {};
  Buffer buffer(*f.context, sizeof data);
  buffer.write(data, sizeof data);  // host copies before the launch are not in the window
  EXPECT_EQ(f.driver.calls("cuEventRecord"), 0);
  const int copy = f.driver.find("cuMemcpyHtoDAsync");
  f.function.launch({1, 1, 1}, {32, 1, 1}, 0, {});
  f.function.launch({1, 1, 1}, {32, 1, 1}, 0, {});
  const int spin = f.driver.find("cuLaunchKernel tunekit_backlog_spin");
  const int start = f.driver.find("cuEventRecord start");
  const int first = f.driver.find("cuLaunchKernel k");
  EXPECT_LT(copy, spin);
  EXPECT_LT(spin, start);
  EXPECT_LT(start, first);
  EXPECT_EQ(f.driver.calls("cuEventRecord"), 1) << "one start per window";
  EXPECT_DOUBLE_EQ(clock.end(), 2.5e-3);
  EXPECT_GT(f.driver.find("cuEventRecord stop"), first);
  EXPECT_GT(f.driver.find("cuEventSynchronize stop"), f.driver.find("cuEventRecord stop"));
  // The backlog spins seconds x clock (kHz) x 1000 cycles: 50 us at 1.98 GHz.
  ASSERT_EQ(f.driver.launches.front().function, "tunekit_backlog_spin");
  EXPECT_EQ(f.driver.launches.front().first_arg, 99000);
  EXPECT_EQ(f.driver.launches.front().grid[0], 1u);
}

TEST(CudaWindow, TheStopIsRecordedBehindTheLastLaunchBeforeTheHostWaits) {
  // An isolated sample: launch, synchronize, end. Recorded after the wait, the stop would carry
  // the host's wake-up into a short kernel's reading.
  Fixture f;
  EventClock clock(f.context);
  clock.begin();
  f.function.launch({1, 1, 1}, {32, 1, 1}, 0, {});
  f.context->synchronize();
  const int stop = f.driver.find("cuEventRecord stop");
  ASSERT_GE(stop, 0) << "recorded at synchronize";
  EXPECT_LT(stop, f.driver.find("cuStreamSynchronize"));
  EXPECT_GT(clock.end(), 0.0);
  EXPECT_EQ(f.driver.calls("cuEventRecord"), 2) << "one start and one stop, not two stops";
}

TEST(CudaWindow, AWindowWithNothingEnqueuedHasNoReading) {
  Fixture f;
  f.context->begin_window();
  EXPECT_EQ(f.context->end_window(), 0.0);
  EXPECT_EQ(f.driver.calls("cuEventRecord"), 0);
  f.function.launch({1, 1, 1}, {32, 1, 1}, 0, {});  // outside a window: no events
  EXPECT_EQ(f.driver.calls("cuEventRecord"), 0);
}

TEST(CudaWindow, WithoutABacklogTheStartIsRecordedBeforeTheFirstLaunch) {
  Fixture f(0.0);
  EXPECT_EQ(f.driver.find("cuModuleGetFunction tunekit_backlog_spin"), -1);
  f.context->begin_window();
  f.function.launch({1, 1, 1}, {32, 1, 1}, 0, {});
  EXPECT_EQ(f.driver.find("cuLaunchKernel tunekit_backlog_spin"), -1);
  EXPECT_LT(f.driver.find("cuEventRecord start"), f.driver.find("cuLaunchKernel k"));
  EXPECT_DOUBLE_EQ(f.context->end_window(), 2.5e-3);
}

TEST(CudaDeviceTrial, BuildLaunchAndSyncAreTheWorkloadsAndTheStreams) {
  Fixture f;
  CudaDevice device(f.context);
  EXPECT_EQ(device.identity().backend, "cuda");
  EXPECT_EQ(device.default_depth_cap(), 2048);
  EXPECT_EQ(device.workers(), Device::Workers::spawned);
  ASSERT_TRUE(device.reopen().has_value());
  EXPECT_EQ(device.reopen()->backend, "cuda");
  EXPECT_EQ(device.reopen()->device, std::to_string(f.context->info().index));
  EXPECT_EQ(device.reopen()->arch, f.context->arch());
  auto trial = device.make_trial(f.workload, 0);
  EXPECT_TRUE(trial->build().ok());
  EXPECT_EQ(f.workload.builds, 1);
  EXPECT_TRUE(trial->prepare().ok());
  trial->launch();
  trial->sync();
  EXPECT_EQ(f.candidate_launches(), 1);
  EXPECT_EQ(f.driver.calls("cuStreamSynchronize"), 1);
  trial->release();
}

TEST(CudaDeviceTrial, ABatchIsCapturedOncePerDepthOutsideTheWindowAndReplayed) {
  Fixture f;
  CudaDevice device(f.context);
  auto trial = device.make_trial(f.workload, 0);
  f.context->begin_window();
  trial->launch_batch(8);
  // The capture came before the window's start: it is not in the reading.
  EXPECT_LT(f.driver.find("cuStreamEndCapture"), f.driver.find("cuEventRecord start"));
  EXPECT_LT(f.driver.find("cuEventRecord start"), f.driver.find("cuGraphLaunch"));
  trial->sync();
  EXPECT_DOUBLE_EQ(f.context->end_window(), 2.5e-3);
  trial->launch_batch(8);
  trial->launch_batch(8);
  EXPECT_EQ(f.driver.calls("cuStreamBeginCapture"), 1);
  EXPECT_EQ(f.driver.calls("cuGraphInstantiate"), 1);
  EXPECT_EQ(f.driver.calls("cuGraphLaunch"), 3);
  EXPECT_EQ(f.candidate_launches(), 8) << "launches are captured once, then replayed";
  for (const auto& l : f.driver.launches) {
    if (l.function == "k") {
      EXPECT_TRUE(l.captured);
    }
  }
  trial->launch_batch(16);  // another depth: its own graph
  EXPECT_EQ(f.driver.calls("cuStreamBeginCapture"), 2);
  EXPECT_EQ(f.driver.calls("cuGraphLaunch"), 4);
  trial->release();
  EXPECT_EQ(f.driver.calls("cuGraphExecDestroy"), 2);
  trial.reset();
  EXPECT_EQ(f.driver.calls("cuGraphExecDestroy"), 2) << "released once";
}

TEST(CudaDeviceTrial, AGraphIsUploadedBeforeTheWindowStarts) {
  Fixture f;
  CudaDevice device(f.context);
  auto trial = device.make_trial(f.workload, 0);
  f.context->begin_window();
  trial->launch_batch(8);
  // Not uploaded ahead, the first cuGraphLaunch uploads it behind the start event.
  const int upload = f.driver.find("cuGraphUpload");
  ASSERT_GE(upload, 0) << "the executable graph is uploaded when it is made";
  EXPECT_GT(upload, f.driver.find("cuGraphInstantiate"));
  EXPECT_LT(upload, f.driver.find("cuEventRecord start"));
  trial->sync();
  f.context->end_window();
  trial->launch_batch(8);
  EXPECT_EQ(f.driver.calls("cuGraphUpload"), 1) << "once per graph";
  trial->release();
}

TEST(CudaDeviceTrial, AGraphThatCannotBeUploadedIsDestroyedAndLaunchFailed) {
  Fixture f;
  CudaDevice device(f.context);
  auto trial = device.make_trial(f.workload, 0);
  f.driver.fail_next("cuGraphUpload", CUDA_ERROR_INVALID_VALUE);
  EXPECT_THROW(trial->launch_batch(4), TrialError);
  EXPECT_EQ(f.driver.calls("cuGraphExecDestroy"), 1);
  EXPECT_EQ(f.driver.calls("cuGraphLaunch"), 0);
  trial->release();
}

TEST(CudaDeviceTrial, ACandidateThatSynchronisesWhileCapturedIsLaunchFailed) {
  Fixture f;
  FakeWorkload host_work([&] {
    f.function.launch({1, 1, 1}, {32, 1, 1}, 0, {});
    f.context->synchronize();  // host work: breaks the capture
  });
  CudaDevice device(f.context);
  auto trial = device.make_trial(host_work, 0);
  try {
    trial->launch_batch(4);
    FAIL() << "no error";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::launch_failed);
    const std::string m = e.what();
    EXPECT_NE(m.find("capturing 4 launches into a CUDA graph failed"), std::string::npos) << m;
    EXPECT_NE(m.find("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"), std::string::npos) << m;
    EXPECT_NE(m.find("must only enqueue work on the context's stream"), std::string::npos) << m;
  }
  EXPECT_FALSE(f.context->lost());
  EXPECT_EQ(f.driver.calls("cuStreamEndCapture"), 1) << "the stream left capture mode";
  EXPECT_EQ(f.driver.calls("cuGraphLaunch"), 0);
  // The context works on: a well-behaved batch captures and replays.
  auto good = device.make_trial(f.workload, 0);
  good->launch_batch(2);
  EXPECT_EQ(f.driver.calls("cuGraphLaunch"), 1);
}

TEST(CudaDeviceTrial, AFailedEndOfCaptureIsLaunchFailed) {
  Fixture f;
  CudaDevice device(f.context);
  auto trial = device.make_trial(f.workload, 0);
  f.driver.fail_next("cuStreamEndCapture", CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
  try {
    trial->launch_batch(3);
    FAIL() << "no error";
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::launch_failed);
    EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"), std::string::npos)
        << e.what();
  }
  trial->launch_batch(3);  // not remembered as captured: captured again, now fine
  EXPECT_EQ(f.driver.calls("cuStreamBeginCapture"), 2);
  EXPECT_EQ(f.driver.calls("cuGraphLaunch"), 1);
}

TEST(CudaEvictor, WritesTwiceTheL2OnTheStream) {
  Fixture f;
  L2Evictor evictor(f.context);
  EXPECT_EQ(f.driver.calls("cuMemAlloc"), 1);
  evictor.evict();
  evictor.evict();
  ASSERT_EQ(f.driver.memsets.size(), 2u);
  EXPECT_EQ(f.driver.memsets[0], 2 * (std::size_t{50} << 20) / 4);  // 32-bit words
}

// The instrument itself on the fake: queued samples are graph replays read by the events.
TEST(CudaDeviceTrial, TimeRoutineQueuedReadsGraphReplays) {
  Fixture f;
  CudaDevice device(f.context);
  auto trial = device.make_trial(f.workload, 0);
  TimingOptions options;
  options.mode = TimingMode::queued;
  options.fixed_depth = 64;
  options.repeats_floor = 4;
  options.max_runs = 4;
  options.evictor = device.evictor();
  const TimingResult result = time_routine(*trial, device.clock(), options);
  ASSERT_TRUE(result.ok()) << result.outcome.message;
  EXPECT_EQ(result.clock, "cuda_events");
  EXPECT_EQ(result.depth, 64);
  EXPECT_DOUBLE_EQ(result.median, 2.5e-3 / 64);
  EXPECT_EQ(f.driver.calls("cuStreamBeginCapture"), 1);
  EXPECT_EQ(f.driver.calls("cuGraphLaunch"), static_cast<int>(result.samples.size()));
  EXPECT_EQ(f.driver.memsets.size(), result.samples.size());
}

}  // namespace
}  // namespace tunekit::cuda
