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
#include <vector>

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

}  // namespace

void limit_address_space(std::uint64_t extra) {
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

std::optional<std::string> receive_request(int fd) {
  std::string request;
  if (receive_message(fd, request, std::nullopt) != Received::message) return std::nullopt;
  return request;
}

bool send_answer(int fd, std::string_view answer) {
  return send_message(fd, answer);
}

int serve_requests(int fd, const WorkerProcess::Serve& serve) {
  try {
    for (std::string request;;) {
      if (receive_message(fd, request, std::nullopt) != Received::message) return 0;
      if (!send_message(fd, serve(request))) return 71;
    }
  } catch (...) {
    return 70;  // serve() answers its own failures; this is a broken worker
  }
}

namespace {

// The descriptor a spawned worker program finds its socket on.
constexpr int kSpawnedFd = 3;

// In the child, before serving: its own process group (a timeout kills whatever the candidate
// started too), only its own socket open (the host's other descriptors, another worker's
// socket or a device lock, must not be kept open by it: a worker that never sees end-of-file),
// and death with the host.
void detach(int fd) {
  ::setpgid(0, 0);
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0u, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // kept across exec
}

[[noreturn]] void child_main(int fd, const WorkerProcess::Serve& serve,
                             std::uint64_t memory_bytes) {
  detach(fd);
  limit_address_space(memory_bytes);
  ::_exit(serve_requests(fd, serve));
}

// Only async-signal-safe calls: the host may have other threads. `argv` was made before fork.
[[noreturn]] void exec_main(int fd, char* const* argv) {
  detach(fd);
  sigset_t none;
  ::sigemptyset(&none);
  ::pthread_sigmask(SIG_SETMASK, &none, nullptr);  // not the forking thread's mask
  if (fd != kSpawnedFd) {
    if (::dup2(fd, kSpawnedFd) < 0) ::_exit(127);
    ::close(fd);
  }
  ::fcntl(kSpawnedFd, F_SETFD, 0);  // kept open across exec
  ::execv(argv[0], argv);
  ::_exit(127);
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

WorkerProcess::WorkerProcess(Spawn spawn) : spawn_(std::move(spawn)) {}

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
  // Never on a standard descriptor (a host started with them closed): the child keeps 0-2.
  for (int& fd : fds) {
    if (fd >= 3) continue;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (moved < 0) {
      result.message = std::string("cannot move the worker's socket: ") + std::strerror(errno);
      ::close(fds[0]), ::close(fds[1]);
      return result;
    }
    ::close(fd);
    fd = moved;
  }
  std::string fd_text = std::to_string(kSpawnedFd);
  std::vector<char*> argv;
  if (spawn_) {
    static char command[] = "trial-worker", fd_flag[] = "--fd";
    argv = {spawn_->program.data(), command, fd_flag, fd_text.data(), nullptr};
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.message = std::string("cannot start a worker process: ") + std::strerror(errno);
    ::close(fds[0]), ::close(fds[1]);
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (spawn_) exec_main(fds[1], argv.data());
    child_main(fds[1], serve_, memory_bytes_);
  }
  ::close(fds[1]);
  pid_ = pid;
  socket_ = fds[0];
  if (spawn_) return set_up();
  result.kind = WorkerResult::Kind::answered;
  return result;
}

WorkerResult WorkerProcess::set_up() {
  const auto started = Clock::now();
  WorkerResult result;
  std::string answer;
  Received r = Received::closed;
  if (send_message(socket_, spawn_->setup))
    r = receive_message(socket_, answer, deadline_after(spawn_->setup_seconds));
  if (r == Received::message && answer.empty()) {
    result.kind = WorkerResult::Kind::answered;
    result.setup_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return result;
  }
  const std::string program = "the worker program " + spawn_->program;
  WorkerResult gone = failed(r == Received::late, spawn_->setup_seconds);
  result.kind = WorkerResult::Kind::setup_failed;
  if (r == Received::message) {
    result.message = program + " could not set up: " + answer;
  } else if (gone.kind == WorkerResult::Kind::timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g", spawn_->setup_seconds);
    result.message = program + " did not set up within " + limit + " s";
  } else if (gone.signal == 0 && gone.exit_code == 127) {
    result.message = program + " could not be started (is it the tunekit executable?)";
  } else {
    result.message = program +
                     (gone.signal ? " was killed by " + signal_name(gone.signal)
                                  : " exited with status " + std::to_string(gone.exit_code)) +
                     " while setting up";
  }
  return result;
}

WorkerResult WorkerProcess::call(std::string_view request, double limit_seconds) {
  double setup_seconds = 0;
  if (!running()) {
    WorkerResult started = start();
    if (started.kind != WorkerResult::Kind::answered) return started;
    setup_seconds = started.setup_seconds;
  }
  WorkerResult result = exchange(request, limit_seconds);
  result.setup_seconds = setup_seconds;
  return result;
}

WorkerResult WorkerProcess::exchange(std::string_view request, double limit_seconds) {
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
