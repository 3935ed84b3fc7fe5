// Tests for src/backends/cpu/thread_placement: listing this process's threads; moving a thread
// off the caller's CPU and giving it its own CPU mask back.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/thread_placement.hpp"
#include "fakes/thread_cpu.hpp"
#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {

bool contains(const std::vector<int>& ids, int id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

// A thread that spins (as a library's helper does between calls) until the test ends.
class Spinner {
 public:
  Spinner()
      : thread_([this] {
          tid_ = static_cast<int>(::syscall(SYS_gettid));
          while (!stop_.load(std::memory_order_relaxed)) {
          }
        }) {
    while (tid_ == 0) std::this_thread::yield();
  }
  ~Spinner() {
    stop_ = true;
    thread_.join();
  }
  int tid() const { return tid_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> tid_{0};
  std::thread thread_;
};

TEST(ThreadPlacement, ListsThisProcessesThreadsAndNoEndedOne) {
  const int self = static_cast<int>(::syscall(SYS_gettid));
  int ended = 0;
  {
    Spinner spinner;
    const std::vector<int> ids = thread_ids();
    EXPECT_TRUE(contains(ids, self));
    EXPECT_TRUE(contains(ids, spinner.tid()));
    ended = spinner.tid();
  }
  // A joined thread's entry goes once the kernel has reaped it, a moment after the join.
  bool listed = true;
  for (int wait = 0; wait < 1000 && listed; ++wait) {
    listed = contains(thread_ids(), ended);
    if (listed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_FALSE(listed);
  // A thread that ended is passed over, and nothing is nothing.
  EXPECT_EQ(spread_threads({ended}), 0);
  EXPECT_EQ(spread_threads({}), 0);
}

// The spinner is put on the caller's CPU (where a restarted helper lands); spread, it runs
// elsewhere and keeps the CPU mask it had. The scheduler may move threads of a loaded
// machine at any time, so the placement is asked of half of 20 trials, not all (without the
// move none).
TEST(ThreadPlacement, MovesAThreadOffTheCallersCpuAndGivesItsMaskBack) {
  if (allowed_cpus() < 2)
    GTEST_SKIP() << "this process may run on one CPU only: nothing to spread to";
  Spinner spinner;
  cpu_set_t own;
  CPU_ZERO(&own);
  ASSERT_EQ(::sched_getaffinity(spinner.tid(), sizeof own, &own), 0);
  int spread = 0;
  for (int trial = 0; trial < 20; ++trial) {
    cpu_set_t here;
    CPU_ZERO(&here);
    CPU_SET(::sched_getcpu(), &here);
    ASSERT_EQ(::sched_setaffinity(spinner.tid(), sizeof here, &here), 0);
    ASSERT_EQ(::sched_setaffinity(spinner.tid(), sizeof own, &own), 0);
    EXPECT_EQ(spread_threads({spinner.tid()}), 1);
    cpu_set_t after;
    CPU_ZERO(&after);
    ASSERT_EQ(::sched_getaffinity(spinner.tid(), sizeof after, &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &own)) << "its own mask was not given back";
    spread += testing::last_cpu(spinner.tid()) != ::sched_getcpu();
  }
  EXPECT_GE(spread, 10) << "the spinner stayed on the caller's CPU in " << 20 - spread << " of 20";
}

// With a spinner on every online CPU and one more, no CPU is idle: a pool helper on its caller's
// CPU stays there rather than wait out a co-runner's time slices on another.
TEST(ThreadPlacement, NoCpuIsIdleWhileMoreThreadsRunThanThereAreCpus) {
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 1 || online > 64) GTEST_SKIP() << online << " online CPUs: too many to occupy";
  // Under a CPU quota the throttled spinners leave the running count.
  if (std::ifstream quota("/sys/fs/cgroup/cpu.max"); quota) {
    std::string limit;
    quota >> limit;
    if (!limit.empty() && limit != "max") GTEST_SKIP() << "a CPU quota (cpu.max " << limit << ")";
  }
  std::vector<std::unique_ptr<Spinner>> spinners;
  for (long i = 0; i <= online; ++i) spinners.push_back(std::make_unique<Spinner>());
  // Runnable threads count whether on a CPU or waiting for one: at least online + 1 now.
  const bool idle = detail::idle_cpu_likely();
  EXPECT_FALSE(idle);
}

}  // namespace
}  // namespace tunekit::cpu
