#include "isolate/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

namespace tunekit::detail {
namespace {

constexpr std::uint64_t kMaxMessage = 64ull << 20;  // requests and answers are reports, not data

using Clock = std::chrono::steady_clock;
using Deadline = std::optional<Clock::time_point>;

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool send_message(int fd, std::string_view message) {
  const std::uint64_t size = message.size();
  return send_all(fd, reinterpret_cast<const char*>(&size), sizeof size) &&
         send_all(fd, message.data(), message.size());
}

enum class Received { message, closed, late };

// Reads exactly `size` bytes into `out` before the deadline.
Received receive_exactly(int fd, char* out, std::size_t size, Deadline deadline) {
  while (size > 0) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = *deadline - Clock::now();
      if (left <= Clock::duration::zero()) return Received::late;
      // Clamped: a limit of months must not wrap to a negative (endless) poll.
      wait_ms = static_cast<int>(std::min<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // the deadline is checked at the top
    const ssize_t n = ::recv(fd, out, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Received::closed;
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return Received::message;
}

Received receive_message(int fd, std::string& out, Deadline deadline) {
  std::uint64_t size = 0;
  Received r = receive_exactly(fd, reinterpret_cast<char*>(&size), sizeof size, deadline);
  if (r != Received::message) return r;
  if (size > kMaxMessage) return Received::closed;  // garbage: treat as a broken worker
  out.resize(size);
  return receive_exactly(fd, out.data(), size, deadline);
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

[[noreturn]] void child_main(int fd, const WorkerProcess::Serve& serve,
                             std::uint64_t memory_bytes) {
  ::setpgid(0, 0);  // its own group: a timeout kills whatever the candidate started too
  // Only its own socket: the host's other descriptors (another worker's socket, a device
  // lock) must not be kept open by this child (a worker that never sees end-of-file).
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0u, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a host that dies takes its worker with it
  limit_memory(memory_bytes);
  int status = 0;
  try {
    for (std::string request;;) {
      if (receive_message(fd, request, std::nullopt) != Received::message) break;
      if (!send_message(fd, serve(request))) {
        status = 71;
        break;
      }
    }
  } catch (...) {
    status = 70;  // serve() answers its own failures; this is a broken worker
  }
  ::_exit(status);
}

// Waits for the child until the deadline; kills it (and its group) when the deadline passes.
// Returns the wait status and whether it had to be killed.
std::pair<int, bool> reap(pid_t pid, Deadline deadline) {
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

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return "was killed by " + signal_name(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

Deadline deadline_after(double seconds) {
  if (seconds <= 0) return std::nullopt;
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
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

WorkerProcess::WorkerProcess(Serve serve, std::uint64_t memory_bytes)
    : serve_(std::move(serve)), memory_bytes_(memory_bytes) {}

WorkerProcess::~WorkerProcess() {
  stop();
}

WorkerResult WorkerProcess::start() {
  WorkerResult result;
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    result.message = std::string("cannot create a socket for the worker: ") + std::strerror(errno);
    return result;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.message = std::string("cannot start a worker process: ") + std::strerror(errno);
    ::close(fds[0]), ::close(fds[1]);
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], serve_, memory_bytes_);
  }
  ::close(fds[1]);
  pid_ = pid;
  socket_ = fds[0];
  result.kind = WorkerResult::Kind::answered;
  return result;
}

WorkerResult WorkerProcess::call(std::string_view request, double limit_seconds) {
  if (!running()) {
    WorkerResult started = start();
    if (started.kind != WorkerResult::Kind::answered) return started;
  }
  const Deadline deadline = deadline_after(limit_seconds);
  WorkerResult result;
  if (!send_message(socket_, request)) return failed(false, limit_seconds);
  switch (receive_message(socket_, result.answer, deadline)) {
    case Received::message:
      result.kind = WorkerResult::Kind::answered;
      return result;
    case Received::closed:
      return failed(false, limit_seconds);
    case Received::late:
      break;
  }
  return failed(true, limit_seconds);
}

WorkerResult WorkerProcess::failed(bool late, double limit_seconds) {
  ::close(socket_);
  socket_ = -1;
  // A worker that closed its end is dying: give it a moment to be reaped with its status.
  const auto [status, killed] = reap(pid_, late ? Clock::now() : *deadline_after(5));
  pid_ = -1;
  WorkerResult result;
  if (late || killed) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g", limit_seconds);
    result.kind = WorkerResult::Kind::timed_out;
    result.message = std::string("still running after ") + limit + " s (the trial's time limit)";
    return result;
  }
  result.kind = WorkerResult::Kind::crashed;
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.message = describe_exit(status) + " before it answered";
  return result;
}

void WorkerProcess::stop() {
  if (!running()) return;
  ::close(socket_);  // the child reads end-of-file and exits
  socket_ = -1;
  reap(pid_, deadline_after(2));
  pid_ = -1;
}

WorkerResult run_in_worker(const std::function<std::string()>& work, double limit_seconds,
                           std::uint64_t memory_bytes) {
  WorkerProcess worker([&](std::string_view) { return work(); }, memory_bytes);
  return worker.call("", limit_seconds);
}

}  // namespace tunekit::detail
