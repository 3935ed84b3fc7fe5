// Thread placement (tunekit/cpu.hpp): listing this process's threads, and moving threads off a
// CPU they share with the thread that called them.
#include "backends/cpu/thread_placement.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
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

bool detail::idle_cpu_likely() {
  // One read of a small file: called only by a thread that found itself on its caller's CPU.
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char buffer[128];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return true;
  buffer[n] = '\0';
  // "0.52 0.58 0.59 3/412 12345": the fourth field is running/total.
  const char* p = buffer;
  for (int field = 0; field < 3 && p; ++field)
    p = std::strchr(p, ' ') ? std::strchr(p, ' ') + 1 : nullptr;
  if (!p) return true;
  const long running = std::strtol(p, nullptr, 10);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online <= 0 || running <= online;  // the caller and this thread among them
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
