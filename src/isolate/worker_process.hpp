// A worker process for one phase of a trial (DESIGN §11): the work runs in a forked child, so
// a crash (any signal), an exit, a hang past the time limit or an allocation over the memory
// limit ends the child, never the host. The child shares nothing with the host afterwards: its
// answer comes back as bytes through a pipe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace tunekit::detail {

struct WorkerLimits {
  double seconds = 0;              // wall-clock limit of the child (0: none)
  std::uint64_t memory_bytes = 0;  // address space the child may add to what it inherits (0: none)
};

struct WorkerResult {
  enum class Kind {
    answered,     // the work returned; `answer` holds its bytes
    crashed,      // killed by a signal (`signal`) or exited (`exit_code`) before answering
    timed_out,    // killed after `limits.seconds`
    not_started,  // fork() or pipe() failed (`message`)
  };
  Kind kind = Kind::not_started;
  std::string answer;
  int signal = 0;
  int exit_code = 0;
  std::string message;  // what happened, for the outcome's message
};

// Runs `work` in a forked child and returns what it answered. The child runs only `work` and
// then _exit()s: no atexit handlers, no stdio flush of the host's buffers. `work` may throw:
// the child then reports an exit, not an answer. Thread-safe (each call has its own child).
WorkerResult run_in_worker(const std::function<std::string()>& work, const WorkerLimits& limits);

// The signal's name ("SIGSEGV"), or "signal N".
std::string signal_name(int signal);

}  // namespace tunekit::detail
