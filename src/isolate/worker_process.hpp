// A worker process for the trials of one search (DESIGN §11): requests are served in a forked
// child, so a crash (any signal), an exit, a hang past a request's time limit or an allocation
// over the memory limit ends the child, never the host. The child shares nothing with the
// host after the fork: requests and answers are bytes on a socket. A worker that died (or was
// killed at a limit) is gone; the caller starts another.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tunekit::detail {

struct WorkerResult {
  enum class Kind {
    answered,      // `answer` holds the reply
    crashed,       // killed by a signal (`signal`) or exited (`exit_code`) before answering
    timed_out,     // killed after the request's limit
    not_started,   // fork() or socketpair() failed (`message`)
    setup_failed,  // a spawned worker could not set up (`message`: its answer, or how it died)
  };
  Kind kind = Kind::not_started;
  std::string answer;
  int signal = 0;
  int exit_code = 0;
  std::string message;       // what happened, for the outcome's message
  double setup_seconds = 0;  // a spawned worker started for this call: its start and setup
};

class WorkerProcess {
 public:
  // serve(request) -> answer runs in the child for each request. The child runs nothing else:
  // it _exit()s when the host closes its end (no atexit handlers, no flush of the host's stdio
  // buffers). A serve() that throws ends the child (the caller's serve answers its own
  // failures). `memory_bytes`: address space the child may add to what it inherits (0: none).
  using Serve = std::function<std::string(std::string_view request)>;
  WorkerProcess(Serve serve, std::uint64_t memory_bytes);
  // A spawned worker: the child execs `program trial-worker --fd 3` (a fresh process, for a
  // device whose driver state does not survive fork()), is sent `setup` first and must answer
  // "" within `setup_seconds` (else setup_failed with its answer); then requests as above. The
  // program applies the memory limit itself, once set up (it is in the setup).
  struct Spawn {
    std::string program;
    std::string setup;
    double setup_seconds = 120;
  };
  explicit WorkerProcess(Spawn spawn);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends one request and waits for its answer at most `limit_seconds` (0: no limit); the
  // child is started on the first request, and again after one that did not answer.
  WorkerResult call(std::string_view request, double limit_seconds);
  // Ends the child (the next call starts a new one).
  void stop();
  bool running() const { return pid_ > 0; }

 private:
  WorkerResult start();
  WorkerResult exchange(std::string_view request, double limit_seconds);
  WorkerResult failed(bool killed, double limit_seconds);

  WorkerResult set_up();

  Serve serve_;
  std::uint64_t memory_bytes_ = 0;
  std::optional<Spawn> spawn_;
  pid_t pid_ = -1;
  int socket_ = -1;
};

// The child's side of a worker's socket (a spawned program serves through these): one
// message (nullopt when the host closed its end), one answer, and the loop serving requests
// until the host closes (the exit status: 0, or 70/71 for a broken worker).
std::optional<std::string> receive_request(int fd);
bool send_answer(int fd, std::string_view answer);
int serve_requests(int fd, const WorkerProcess::Serve& serve);
// Limits this process's address space to what it has now plus `extra` bytes (0: no limit).
void limit_address_space(std::uint64_t extra);

// Runs `work` once in a worker of its own and returns its answer.
WorkerResult run_in_worker(const std::function<std::string()>& work, double limit_seconds,
                           std::uint64_t memory_bytes = 0);

// The signal's name ("SIGSEGV"), or "signal N".
std::string signal_name(int signal);

}  // namespace tunekit::detail
