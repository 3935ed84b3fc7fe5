#include "backends/cpu/thread_settle.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "tunekit/cpu.hpp"

namespace tunekit::detail {
namespace {

// The state letter of /proc/self/task/<tid>/stat: the field after the command's closing
// parenthesis (the command may itself hold spaces and parentheses, so the last one counts).
char thread_state(const char* tid) {
  const std::string path = std::string("/proc/self/task/") + tid + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return '?';  // ended since the listing
  char buffer[512];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return '?';
  buffer[n] = '\0';
  const char* close = std::strrchr(buffer, ')');
  return close && close[1] == ' ' && close[2] ? close[2] : '?';
}

}  // namespace

std::vector<int> running_threads() {
  std::vector<int> running;
  const long self = ::syscall(SYS_gettid);
  for (const int tid : cpu::thread_ids())
    if (tid != self && thread_state(std::to_string(tid).c_str()) == 'R') running.push_back(tid);
  return running;
}

double settle_threads(double limit_seconds, std::vector<int>& co_runners) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto waited = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  for (;;) {
    std::vector<int> running = running_threads();
    std::erase_if(running, [&](int tid) {
      return std::find(co_runners.begin(), co_runners.end(), tid) != co_runners.end();
    });
    if (running.empty()) return waited();
    if (waited() >= limit_seconds) {
      co_runners.insert(co_runners.end(), running.begin(), running.end());
      return waited();
    }
    // Sleeping, not spinning: the caller's core is free for the threads winding down.
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

}  // namespace tunekit::detail
