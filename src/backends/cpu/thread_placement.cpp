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

// A fixed cpu_set_t: on a machine of more than CPU_SETSIZE (1024) CPUs the calls fail and
// nothing moves (the pool then asks again only every 10 ms).
bool detail::move_off_cpu(int tid, int avoid, std::size_t nth) {
  if (avoid < 0 || avoid >= CPU_SETSIZE) return false;
  cpu_set_t own;
  CPU_ZERO(&own);
  if (::sched_getaffinity(tid, sizeof own, &own) != 0) return false;  // ended
  // Its own CPUs but `avoid`: the kernel moves it at once to one of them (the nth, where
  // several threads are spread at once), and its own mask back leaves it there.
  cpu_set_t target = own;
  CPU_CLR(avoid, &target);
  const int others = CPU_COUNT(&target);
  if (others == 0) return false;
  if (nth > 0) {
    CPU_ZERO(&target);
    for (int c = 0, seen = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &own) && c != avoid && seen++ == static_cast<int>(nth % others))
        CPU_SET(c, &target);
  }
  if (::sched_setaffinity(tid, sizeof target, &target) != 0) return false;
  // Should the mask have shrunk meanwhile (a cpuset changed), the thread keeps the narrower
  // one: still a CPU it may run on.
  return ::sched_setaffinity(tid, sizeof own, &own) == 0;
}

bool detail::idle_cpu_likely() {
  // Two small reads: called only by a thread that found itself on its caller's CPU. The running
  // count is the whole machine's: it says nothing about this process's CPUs where they are a
  // subset (a cpuset container), so there no CPU is taken to be idle.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (online <= 0 || ::sched_getaffinity(0, sizeof mine, &mine) != 0 || CPU_COUNT(&mine) < online)
    return false;
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[128];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return false;
  buffer[n] = '\0';
  // "0.52 0.58 0.59 3/412 12345": the fourth field is running/total.
  const char* p = buffer;
  for (int field = 0; field < 3 && p; ++field) {
    p = std::strchr(p, ' ');
    if (p) ++p;
  }
  if (!p) return false;
  const long running = std::strtol(p, nullptr, 10);
  return running > 0 && running <= online;  // the caller and the thread asking among them
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
  if (here < 0) return 0;  // where the caller runs is unknown: nothing to move off
  int moved = 0;
  for (std::size_t i = 0; i < threads.size(); ++i)
    moved += detail::move_off_cpu(threads[i], here, i) ? 1 : 0;
  return moved;
}

}  // namespace tunekit
