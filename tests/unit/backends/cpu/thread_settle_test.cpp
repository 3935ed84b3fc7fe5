// Tests for src/backends/cpu/thread_settle: waiting out threads a candidate left spinning.
#include "backends/cpu/thread_settle.hpp"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "tunekit/cpu.hpp"

namespace tunekit::detail {
namespace {

// A thread that spins (as OpenBLAS's do after a call) until told to stop, then blocks.
class Spinner {
 public:
  Spinner()
      : thread_([this] {
          tid_ = static_cast<int>(::syscall(SYS_gettid));
          started_ = true;
          while (!stop_.load(std::memory_order_relaxed)) {
          }
          stopped_ = true;
          release_.get_future().wait();  // blocked: state S
        }) {
    while (!started_) std::this_thread::yield();
  }
  ~Spinner() {
    stop_ = true;
    release_.set_value();
    thread_.join();
  }
  void stop() { stop_ = true; }
  bool stopped() const { return stopped_; }
  int tid() const { return tid_; }

 private:
  std::atomic<bool> stop_{false}, started_{false}, stopped_{false};
  std::atomic<int> tid_{0};
  std::promise<void> release_;
  std::thread thread_;
};

TEST(ThreadSettle, SeesASpinningThreadAndNotABlockedOne) {
  Spinner s;
  std::vector<int> running = running_threads();
  EXPECT_NE(std::find(running.begin(), running.end(), s.tid()), running.end());
  const long self = ::syscall(SYS_gettid);
  EXPECT_EQ(std::find(running.begin(), running.end(), self), running.end());  // never the caller
  s.stop();
  while (!s.stopped()) std::this_thread::yield();
  // Blocked on the future now (give it a moment to get there).
  for (int i = 0; i < 1000; ++i) {
    running = running_threads();
    if (std::find(running.begin(), running.end(), s.tid()) == running.end()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(std::find(running.begin(), running.end(), s.tid()), running.end());
}

TEST(ThreadSettle, WaitsUntilASpinnerWindsDown) {
  Spinner s;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    s.stop();
  });
  std::vector<int> co_runners;
  const double waited = settle_threads(60.0, co_runners);
  EXPECT_TRUE(s.stopped());  // it returned only once the spinner had stopped spinning
  EXPECT_GT(waited, 0.0);
  EXPECT_TRUE(co_runners.empty());
  stopper.join();
}

TEST(ThreadSettle, AThreadStillRunningAtTheLimitIsACoRunnerAndNotWaitedForAgain) {
  Spinner s;
  std::vector<int> co_runners;
  settle_threads(0.02, co_runners);
  EXPECT_FALSE(s.stopped());
  ASSERT_NE(std::find(co_runners.begin(), co_runners.end(), s.tid()), co_runners.end());
  // A minute's limit, and it returns while the co-runner still spins: it did not wait for it.
  settle_threads(60.0, co_runners);
  EXPECT_FALSE(s.stopped());
}

TEST(ThreadSettle, TheCpuDeviceSettlesBeforeAWindow) {
  cpu::CpuDevice device;
  Spinner s;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    s.stop();
  });
  device.settle(60.0);
  EXPECT_TRUE(s.stopped());
  stopper.join();
}

}  // namespace
}  // namespace tunekit::detail
