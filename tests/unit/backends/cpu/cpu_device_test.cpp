// Tests for src/backends/cpu: identity, clock, evictor.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/cpu/run_queue_wait.hpp"
#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {

TEST(CpuDevice, IdentityFromHwloc) {
  DeviceIdentity id = host_identity();
  EXPECT_EQ(id.backend, "cpu");
  EXPECT_TRUE(id.known);
  EXPECT_FALSE(id.product.empty());
  EXPECT_GE(id.compute_units, 1);
  EXPECT_GT(id.memory_bytes, 0u);
  EXPECT_GT(id.l1d_bytes, 0u);
  EXPECT_GE(id.l3_bytes, id.l2_bytes);
}

TEST(CpuDevice, SteadyClockMeasuresElapsedTime) {
  SteadyClock clock;
  clock.begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  double t = clock.end();
  EXPECT_GE(t, 0.002);
  EXPECT_LT(t, 5.0);
}

// Spins on the calling thread for `seconds` of wall time.
void spin_for(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  volatile double x = 1;
  while (std::chrono::steady_clock::now() < until) x = x * 1.0000001 + 1e-9;
}

TEST(CpuDevice, SteadyClockSaysHowLongTheThreadsWaitedForACpu) {
  // A sleep is not a wait for a CPU: the reading's wait is known and a small part of it. The
  // sleep is long against the one wait a loaded machine adds (the wake-up's, measured at 28 ms
  // on a 2-core CI machine building beside the tests), which a sleep counted as a wait is not.
  SteadyClock clock;
  clock.begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double slept = clock.end();
  ASSERT_GE(clock.waited_seconds(), 0) << "/proc/self/task/*/schedstat should be readable";
  EXPECT_LT(clock.waited_seconds(), slept / 2);

  // Two threads of this process pinned to one core: while the reading's thread spins, the
  // other waits for the core, and the clock sees it. In a child, so the pinning stays there.
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(::sched_getcpu(), &one);
    double result[2] = {-2, -2};
    if (::sched_setaffinity(0, sizeof one, &one) == 0) {
      std::atomic<bool> stop{false};
      std::thread rival([&] {
        volatile double x = 1;
        while (!stop.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
      });
      SteadyClock pinned;
      spin_for(0.02);  // the rival is running: the first reading starts on a shared core
      pinned.begin();
      spin_for(0.2);
      result[0] = pinned.end();
      result[1] = pinned.waited_seconds();
      stop = true;
      rival.join();
    }
    const bool written = ::write(out[1], result, sizeof result) == sizeof result;
    ::_exit(written ? 0 : 1);
  }
  ::close(out[1]);
  double result[2] = {0, 0};
  const bool read_all = ::read(out[0], result, sizeof result) == sizeof result;
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(read_all && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_NE(result[0], -2) << "could not pin the child to one core";
  // The rival had the core for a good share of the 0.2 s: its waits and the reading thread's
  // sum to about the reading; a tenth of it is far under what one core shared by two gives.
  EXPECT_GT(result[1], 0.1 * result[0]) << "reading " << result[0] << " s";
}

// Runs `body` in a child process and returns what it wrote (one double), or NaN.
template <class Body>
double in_child(Body body) {
  int out[2];
  if (::pipe(out) != 0) return std::nan("");
  const pid_t child = ::fork();
  if (child < 0) return std::nan("");
  if (child == 0) {
    const double value = body();
    const bool written = ::write(out[1], &value, sizeof value) == sizeof value;
    ::_exit(written ? 0 : 1);
  }
  ::close(out[1]);
  double value = std::nan("");
  if (::read(out[0], &value, sizeof value) != sizeof value) value = std::nan("");
  ::close(out[0]);
  ::waitpid(child, nullptr, 0);
  return value;
}

// A thread started during a reading (a pool's, a library's first call) may wait for a CPU
// unseen: the reading cannot tell. Once the list holds it again, readings can. In a child, where
// no other test's threads come and go.
TEST(CpuDevice, AReadingDuringWhichAThreadStartedCannotTellItsWaits) {
  const double seen = in_child([] {
    SteadyClock clock;
    clock.begin();
    clock.end();
    const bool before = clock.waited_seconds() >= 0;
    std::mutex m;
    std::condition_variable cv;
    bool go = false;
    clock.begin();
    std::thread helper([&] {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return go; });
    });
    clock.end();
    const bool started_unseen = clock.waited_seconds() == -1;
    clock.begin();  // the process has a thread more than the list: listed again at once
    clock.end();
    const bool listed = clock.waited_seconds() >= 0;
    {
      std::lock_guard lock(m);
      go = true;
    }
    cv.notify_all();
    helper.join();
    clock.begin();
    clock.end();
    const bool fewer = clock.waited_seconds() >= 0;
    return 1.0 * before + 2.0 * started_unseen + 4.0 * listed + 8.0 * fewer;
  });
  EXPECT_EQ(seen, 15) << "bits: 1 told before, 2 -1 while a thread started, 4 told once listed, "
                         "8 told after it ended";
}

TEST(CpuDevice, AProcessWithThousandsOfThreadsOrNoFdsLeftIsNotFollowed) {
  // More threads than the clock follows (256): it answers "cannot tell", holding no files.
  const double many = in_child([] {
    std::mutex m;
    std::condition_variable cv;
    bool go = false;
    std::vector<std::thread> threads;
    for (int i = 0; i < 300; ++i)
      threads.emplace_back([&] {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return go; });
      });
    SteadyClock clock;
    clock.begin();
    clock.end();
    const double waited = clock.waited_seconds();
    {
      std::lock_guard lock(m);
      go = true;
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
    return waited;
  });
  EXPECT_EQ(many, -1);
  // No file descriptor left to open: "cannot tell". The reader itself, not the clock: with no
  // fds a sanitizer's runtime cannot check a polymorphic object's type either.
  const double no_fds = in_child([] {
    rlimit none{0, 0};
    ::getrlimit(RLIMIT_NOFILE, &none);
    none.rlim_cur = 0;
    if (::setrlimit(RLIMIT_NOFILE, &none) != 0) return -3.0;
    detail::RunQueueWait waits;
    waits.start();
    return waits.since_start();
  });
  EXPECT_EQ(no_fds, -1);
}

TEST(CpuDevice, EvictorRunsAndTheDeviceOffersIt) {
  CpuDevice dev;
  ASSERT_NE(dev.evictor(), nullptr);
  dev.evictor()->evict();
  dev.evictor()->evict();
  EXPECT_EQ(dev.clock().name(), "steady_clock");
}

}  // namespace
}  // namespace tunekit::cpu
