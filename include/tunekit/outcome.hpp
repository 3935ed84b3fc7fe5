// Trial outcomes (DESIGN §4): every per-candidate failure is one of these values.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tunekit {

enum class Status {
  ok,
  rejected,           // the candidate does not serve this key; nothing ran
  compile_failed,     // building or preparing the candidate failed
  launch_failed,      // a launch (a call of the candidate) failed
  out_of_memory,      // an allocation failed
  validation_failed,  // output disagrees with the reference beyond tolerance
  not_measured,       // a window carried no reading (e.g. a zero-length reading)
  refused,            // the measurement was contended (after one retry)
  timed_out,
  stopped,   // a budget or stop() stopped it
  hopeless,  // cut early: it could not beat the incumbent
  skipped,   // not attempted (numerics policy, earlier plan group won, ...)
  crashed,   // its worker process died (a signal, or an exit) before it answered
  // The device failed for good (a CUDA sticky error: illegal address, ECC, reset): the device
  // is marked lost and the search on it ends (a FatalError out of the tuner, DESIGN §4).
  device_lost,
};

std::string_view to_string(Status status);
// Inverse of to_string; nullopt for an unknown name.
std::optional<Status> status_from_string(std::string_view name);

struct Outcome {
  Status status = Status::ok;
  std::string message;
  bool ok() const { return status == Status::ok; }
  static Outcome success() { return {}; }
};

// Thrown by candidate code to classify its own failure precisely (for example
// TrialError(Status::rejected, "k must be a multiple of 4")). Any other std::exception
// thrown by a candidate is classified as launch_failed (or out_of_memory for bad_alloc).
class TrialError : public std::runtime_error {
 public:
  TrialError(Status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

}  // namespace tunekit
