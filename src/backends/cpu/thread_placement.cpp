// Thread placement (tunekit/cpu.hpp): listing this process's threads, and spreading a
// library's restarted helpers off the caller's CPU.
#include <dirent.h>
#include <sched.h>

#include <cstdlib>
#include <vector>

#include "tunekit/cpu.hpp"

namespace tunekit::cpu {

std::vector<int> thread_ids() {
  std::vector<int> ids;
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return ids;
  while (const dirent* e = ::readdir(dir))
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') ids.push_back(std::atoi(e->d_name));
  ::closedir(dir);
  return ids;
}

int spread_threads(const std::vector<int>& threads) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (threads.empty() || ::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
  const int here = ::sched_getcpu();
  std::vector<int> others;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed) && c != here) others.push_back(c);
  if (others.empty()) return 0;
  int moved = 0;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    cpu_set_t own;
    CPU_ZERO(&own);
    if (::sched_getaffinity(threads[i], sizeof own, &own) != 0) continue;  // ended
    // A mask of one CPU moves the thread there at once; its own mask back leaves it there
    // until the scheduler has a reason to move it.
    cpu_set_t target;
    CPU_ZERO(&target);
    CPU_SET(others[i % others.size()], &target);
    if (!CPU_ISSET(others[i % others.size()], &own)) continue;  // not one of its CPUs
    if (::sched_setaffinity(threads[i], sizeof target, &target) != 0) continue;
    ::sched_setaffinity(threads[i], sizeof own, &own);
    ++moved;
  }
  return moved;
}

}  // namespace tunekit::cpu
