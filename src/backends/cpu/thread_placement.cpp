// Thread placement (tunekit/cpu.hpp): listing this process's threads, and moving threads off a
// CPU they share with the thread that called them.
#include "backends/cpu/thread_placement.hpp"

#include <dirent.h>
#include <sched.h>

#include <cstdlib>
#include <vector>

#include "tunekit/cpu.hpp"

namespace tunekit {

bool detail::move_off_cpu(int tid, int avoid, std::size_t nth) {
  cpu_set_t own;
  CPU_ZERO(&own);
  if (::sched_getaffinity(tid, sizeof own, &own) != 0) return false;  // ended
  std::vector<int> others;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &own) && c != avoid) others.push_back(c);
  if (others.empty()) return false;
  // A mask of one CPU moves the thread there at once; its own mask back leaves it there.
  cpu_set_t target;
  CPU_ZERO(&target);
  CPU_SET(others[nth % others.size()], &target);
  if (::sched_setaffinity(tid, sizeof target, &target) != 0) return false;
  ::sched_setaffinity(tid, sizeof own, &own);
  return true;
}

std::vector<int> cpu::thread_ids() {
  std::vector<int> ids;
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return ids;
  while (const dirent* e = ::readdir(dir))
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') ids.push_back(std::atoi(e->d_name));
  ::closedir(dir);
  return ids;
}

int cpu::spread_threads(const std::vector<int>& threads) {
  const int here = ::sched_getcpu();
  int moved = 0;
  for (std::size_t i = 0; i < threads.size(); ++i)
    moved += detail::move_off_cpu(threads[i], here, i) ? 1 : 0;
  return moved;
}

}  // namespace tunekit
