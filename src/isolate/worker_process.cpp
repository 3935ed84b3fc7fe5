#include "isolate/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

namespace tunekit::detail {
namespace {

constexpr std::uint64_t kMaxAnswer = 64ull << 20;  // an answer is a report, never data

using Clock = std::chrono::steady_clock;

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The child's address space now, in bytes (what the memory limit is added to: the host's
// mappings, and a sanitizer's shadow, are inherited and must not count against the trial).
std::uint64_t address_space_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long pages = 0;
  const int read = std::fscanf(f, "%llu", &pages);
  std::fclose(f);
  return read == 1 ? pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

void limit_memory(std::uint64_t extra) {
  if (extra == 0) return;
  const std::uint64_t now = address_space_bytes();
  if (now == 0) return;
  rlimit current{};
  ::getrlimit(RLIMIT_AS, &current);
  rlim_t want = static_cast<rlim_t>(now + extra);
  if (current.rlim_max != RLIM_INFINITY && want > current.rlim_max) want = current.rlim_max;
  rlimit next{want, current.rlim_max};
  ::setrlimit(RLIMIT_AS, &next);
}

[[noreturn]] void child_main(int out, const std::function<std::string()>& work,
                             const WorkerLimits& limits) {
  ::setpgid(0, 0);  // its own group: a timeout kills whatever the candidate started too
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a host that dies takes its worker with it
  limit_memory(limits.memory_bytes);
  int status = 0;
  try {
    const std::string answer = work();
    const std::uint64_t size = answer.size();
    if (!write_all(out, reinterpret_cast<const char*>(&size), sizeof size) ||
        !write_all(out, answer.data(), answer.size()))
      status = 71;
  } catch (...) {
    status = 70;  // the work's own failures are part of its answer; this is a broken worker
  }
  ::_exit(status);
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return "killed by " + signal_name(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}
  // Reads until EOF or the deadline; false when the deadline passed first.
  bool drain(std::optional<Clock::time_point> deadline) {
    char buf[65536];
    while (true) {
      int wait_ms = -1;
      if (deadline) {
        const auto left = *deadline - Clock::now();
        if (left <= Clock::duration::zero()) return false;
        wait_ms = static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1);
      }
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, wait_ms);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) continue;  // the deadline is checked at the top
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return true;
      if (bytes_.size() < kMaxAnswer + sizeof(std::uint64_t)) bytes_.append(buf, n);
    }
  }
  // The answer when the bytes hold exactly one length-prefixed message.
  std::optional<std::string> answer() const {
    std::uint64_t size = 0;
    if (bytes_.size() < sizeof size) return std::nullopt;
    std::memcpy(&size, bytes_.data(), sizeof size);
    if (size > kMaxAnswer || bytes_.size() != sizeof size + size) return std::nullopt;
    return bytes_.substr(sizeof size);
  }

 private:
  int fd_;
  std::string bytes_;
};

// Waits for the child until the deadline; kills it (and its group) when the deadline passes.
// Returns the wait status and whether it had to be killed.
std::pair<int, bool> reap(pid_t pid, std::optional<Clock::time_point> deadline) {
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, deadline ? WNOHANG : 0);
    if (r == pid) return {status, false};
    if (r < 0 && errno != EINTR) return {0, false};
    if (deadline && Clock::now() >= *deadline) break;
    if (deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {status, true};
}

}  // namespace

std::string signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGXCPU:
      return "SIGXCPU";
    default:
      return "signal " + std::to_string(signal);
  }
}

WorkerResult run_in_worker(const std::function<std::string()>& work, const WorkerLimits& limits) {
  WorkerResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.message = std::string("cannot create a pipe for the worker: ") + std::strerror(errno);
    return result;
  }
  const auto start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (limits.seconds > 0)
    deadline = start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(limits.seconds));
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.message = std::string("cannot start a worker process: ") + std::strerror(errno);
    ::close(fds[0]), ::close(fds[1]);
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work, limits);
  }
  ::close(fds[1]);
  Reader reader(fds[0]);
  const bool finished = reader.drain(deadline);
  ::close(fds[0]);
  const auto [status, killed] = reap(pid, finished ? deadline : std::optional(Clock::now()));
  if (!finished || killed) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g", limits.seconds);
    result.kind = WorkerResult::Kind::timed_out;
    result.message = std::string("still running after ") + limit + " s (the trial's time limit)";
    return result;
  }
  const auto answer = reader.answer();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && answer) {
    result.kind = WorkerResult::Kind::answered;
    result.answer = *answer;
    return result;
  }
  result.kind = WorkerResult::Kind::crashed;
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.message = describe_exit(status) + " before it answered";
  return result;
}

}  // namespace tunekit::detail
