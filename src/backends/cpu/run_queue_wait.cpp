#include "backends/cpu/run_queue_wait.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tunekit::detail {
namespace {

// Threads come and go (a pool starts lazily, a fork child has one): the task list is read
// again at most this often, so a reading costs a pread per thread, not a directory scan.
constexpr auto kRescanEvery = std::chrono::milliseconds(200);
// One open file per thread: a process with more threads than this (a host application with
// thousands) is not followed — the clock answers "cannot tell" rather than take its fds or
// pay a read per thread on every reading.
constexpr std::size_t kMostThreads = 256;

// "<cpu ns> <run-queue ns> <slices>\n": the second field; -1 when unreadable.
long long read_run_delay(int fd) {
  char buffer[96];
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return -1;
  buffer[n] = '\0';
  char* end = nullptr;
  std::strtoll(buffer, &end, 10);
  if (end == buffer) return -1;
  char* after = nullptr;
  const long long delay = std::strtoll(end, &after, 10);
  return after == end ? -1 : delay;
}

// /proc/<pid>/stat's num_threads (field 20), counted after the command name's closing
// parenthesis (the name may hold spaces and parentheses itself); -1 when unreadable.
long num_threads(int fd) {
  char buffer[1024];
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return -1;
  buffer[n] = '\0';
  const char* p = std::strrchr(buffer, ')');
  if (!p) return -1;
  ++p;
  for (int field = 3; field < 20; ++field) {  // skip fields 3..19
    while (*p == ' ') ++p;
    while (*p && *p != ' ') ++p;
    if (!*p) return -1;
  }
  char* end = nullptr;
  const long threads = std::strtol(p, &end, 10);
  return end == p || threads < 1 ? -1 : threads;
}

}  // namespace

RunQueueWait::~RunQueueWait() {
  close_all();
}

void RunQueueWait::close_all() {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
  at_start_.clear();
  if (stat_fd_ >= 0) ::close(stat_fd_);
  stat_fd_ = -1;
}

long RunQueueWait::thread_count() const {
  return stat_fd_ >= 0 ? num_threads(stat_fd_) : -1;
}

void RunQueueWait::rescan() {
  close_all();
  pid_ = static_cast<int>(::getpid());
  scanned_ = std::chrono::steady_clock::now();
  stat_fd_ = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  DIR* dir = stat_fd_ >= 0 ? ::opendir("/proc/self/task") : nullptr;
  if (!dir) {
    close_all();
    unavailable_ = true;
    return;
  }
  bool complete = true;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
    if (fds_.size() == kMostThreads) {
      complete = false;
      break;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) {  // out of fds, no schedstat: give up
      complete = false;
      break;
    }
    if (fd >= 0) fds_.push_back(fd);  // ENOENT: the thread ended since the listing
  }
  ::closedir(dir);
  if (!complete || fds_.empty()) {
    close_all();
    unavailable_ = true;
  }
}

void RunQueueWait::start() {
  if (unavailable_) return;
  // A fork child's files are its parent's: listed again before its count is read.
  const bool same_process = pid_ == static_cast<int>(::getpid());
  long threads = same_process ? thread_count() : -1;
  if (!same_process || std::chrono::steady_clock::now() - scanned_ > kRescanEvery ||
      threads != static_cast<long>(fds_.size())) {
    rescan();
    if (unavailable_) return;
    threads = thread_count();
  }
  // A thread that ended or started between the listing and now: this reading cannot tell.
  threads_at_start_ = threads == static_cast<long>(fds_.size()) ? threads : -1;
  at_start_.resize(fds_.size());
  for (std::size_t i = 0; i < fds_.size(); ++i) at_start_[i] = read_run_delay(fds_[i]);
}

double RunQueueWait::since_start() {
  if (unavailable_ || pid_ != static_cast<int>(::getpid()) || at_start_.size() != fds_.size() ||
      threads_at_start_ < 0 || thread_count() != threads_at_start_)
    return -1;
  long long total = 0;
  for (std::size_t i = 0; i < fds_.size(); ++i) {
    if (at_start_[i] < 0) continue;
    const long long now = read_run_delay(fds_[i]);  // -1: the thread has ended since
    if (now > at_start_[i]) total += now - at_start_[i];
  }
  return static_cast<double>(total) * 1e-9;
}

}  // namespace tunekit::detail
