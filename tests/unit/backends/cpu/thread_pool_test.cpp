// Tests for src/backends/cpu/thread_pool.cpp.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "backends/cpu/thread_placement.hpp"
#include "fakes/thread_cpu.hpp"
#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {

TEST(ThreadPool, RunsEveryTaskOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4);
  for (int threads : {1, 2, 4, 8}) {
    std::vector<std::atomic<int>> seen(1000);
    pool.parallel_for(seen.size(), threads, [&](std::size_t i) { ++seen[i]; });
    for (auto& s : seen) ASSERT_EQ(s.load(), 1);
  }
  pool.parallel_for(0, 4, [](std::size_t) { FAIL(); });
}

TEST(ThreadPool, UsesAtMostTheRequestedThreads) {
  ThreadPool pool(4);
  std::atomic<int> active{0};
  std::atomic<int> peak{0};
  pool.parallel_for(64, 2, [&](std::size_t) {
    int now = ++active;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    --active;
  });
  EXPECT_LE(peak.load(), 2);
}

TEST(ThreadPool, ConcurrentCallersAndNestedCalls) {
  ThreadPool pool(3);
  std::atomic<long> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 20; ++rep) {
        pool.parallel_for(8, 3, [&](std::size_t) {
          // A nested call runs inline instead of deadlocking.
          pool.parallel_for(4, 3, [&](std::size_t) { ++total; });
        });
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4L * 20 * 8 * 4);
}

// A helper that blocked between jobs is often woken onto the caller's CPU (13-15 of 20 windows
// after 20 ms idle on a 2-CPU VM), where the two share one core for the rest of the window;
// it moves off while a CPU is idle. Only windows that end with a CPU idle count (ctest runs
// other tests beside this one): in at most a quarter of them the helper is on the caller's CPU.
TEST(ThreadPool, AHelperWokenOntoTheCallersCpuMovesOff) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "this process may run on one CPU only";
  const std::vector<int> before = thread_ids();
  ThreadPool pool(2);
  std::vector<int> helpers;
  for (const int id : thread_ids())
    if (std::find(before.begin(), before.end(), id) == before.end()) helpers.push_back(id);
  ASSERT_EQ(helpers.size(), 1u);
  auto work = [](std::size_t) {
    volatile float sum = 0;
    for (int i = 0; i < 40000; ++i) sum = sum + static_cast<float>(i) * 0.5f;
  };
  int counted = 0, shared = 0;
  for (int window = 0; window < 60 && counted < 20; ++window) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the helper blocks
    for (int job = 0; job < 20; ++job) pool.parallel_for(2, 2, work);
    const bool on_callers_cpu = testing::last_cpu(helpers[0]) == ::sched_getcpu();
    if (!detail::idle_cpu_likely()) continue;
    ++counted;
    shared += on_callers_cpu;
  }
  if (counted < 10) GTEST_SKIP() << "no CPU was idle after " << 60 - counted << " of 60 windows";
  EXPECT_LE(shared * 4, counted) << "the helper ended on the caller's CPU in " << shared << " of "
                                 << counted;
}

TEST(ThreadPool, ExceptionsReachTheCaller) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(100, 2,
                                 [](std::size_t i) {
                                   if (i == 37) throw std::runtime_error("task failed");
                                 }),
               std::runtime_error);
  std::atomic<int> n{0};
  pool.parallel_for(10, 2, [&](std::size_t) { ++n; });  // still usable
  EXPECT_EQ(n.load(), 10);
}

}  // namespace
}  // namespace tunekit::cpu
