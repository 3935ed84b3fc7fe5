// Tests for src/backends/cpu/thread_pool.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

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
