// What the host asks a worker process (one phase of a trial: admission, or a timing window)
// and what the worker answers (the outcome, the build time when it built, the timing window
// when it timed). A small binary encoding: an answer comes from a process that may have
// scribbled over its own memory, so decoding checks every length and answers nullopt rather
// than trusting them.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/outcome.hpp"
#include "tunekit/timing.hpp"

namespace tunekit::detail {

struct TrialRequest {
  enum class Phase : std::uint8_t { admit, window };
  Phase phase = Phase::admit;
  std::uint64_t index = 0;
  std::uint64_t functions_of = 0;  // window: whose stop/on_call/evictor the host timed with
  bool built = false;              // admit: the host's compile pass built it
  bool check = false;              // window: checked calls after it
  // window, with `check`: the calls run only when the window's fastest reading is at most
  // this many seconds (a candidate that could still win); 0: whatever it read.
  double check_below = 0;
  // window, with `check`: the candidate's validation on the further input sets runs after its
  // checked calls (admission left it for the candidates that could win).
  bool validate_more = false;
  // admit: the further input sets are validated now only when the validation run on the first
  // took at least this many seconds (two cold readings may cut it: SearchContext::measure);
  // else they are left to its checked calls. 0: now, whatever it read.
  double more_sets_over = 0;
  // admit: a validation run at least this long (seconds) that the device's clock knows did not
  // wait for a CPU — the process's threads waited at most `wait_tolerance` of it — is cut on
  // alone (TimingOptions::lone_cut_seconds): the further sets are not validated for it then.
  // +inf: never.
  double lone_cut_over = HUGE_VAL;
  double wait_tolerance = 0;
  // window: the scalar timing options (stop, on_call and the evictor are the worker's own
  // copies of the host's, as they were at the fork).
  TimingOptions timing;
  // Decoded: whether the host's timing had an evictor, a stop() and an on_call (the worker
  // uses its own copies of them).
  bool evict = false, stop = false, on_call = false;
  // The host's stop() answered true when it asked (a spawned worker, which has no copy of the
  // host's functions, stops the window at its first check then).
  bool stopped = false;
  // A spawned worker's budget: the window stops once this long has passed since the request
  // arrived (0: no budget).
  double stop_after_seconds = 0;
};

// What a spawned worker (a fresh process: Device::Workers::spawned) is told first, to make
// the same inputs the host validates and times on: the device to open again, the op by name
// (its candidate-set checksum must match the host's), the key, and the host's TrialInputs
// shape. It answers "" when ready, else why not.
struct TrialSetup {
  std::string backend, device, arch;  // DeviceReopen
  std::string op;
  std::string key;       // Key::text()
  std::string checksum;  // OpBase::checksum().hex()
  std::string store;     // the host's store spec (a backend's compile cache lives beside it)
  std::uint32_t input_sets = 1;
  std::uint32_t rotation_copies = 0;  // TrialInputs::rotation.size()
  std::int32_t check_calls = 0;
  std::uint64_t default_index = 0;
  std::uint64_t memory_bytes = 0;  // address space beyond what it has once set up (0: none)
};

struct TrialAnswer {
  Outcome outcome;
  double compile_seconds = 0;  // the build the phase did (0: none)
  // admit: the validation run's launch and sync on the device's clock (0: not reached)
  double validation_call_seconds = 0;
  // admit: the fastest of the further input sets' validation runs, read on the same clock (0:
  // none read). With the first, two cold readings: a candidate far behind on both is cut
  // before its window (SearchContext::measure).
  double validation_more_seconds = 0;
  // admit or window: the further input sets' validation ran in this phase and passed (a
  // failure is the outcome; one that is no verdict on the kernel — a trial that could not be
  // prepared — leaves them to be validated again).
  bool validated_more = false;
  // admit: the clock knew the validation run did not wait for a CPU (TrialRequest::
  // wait_tolerance); false when it waited or the clock cannot tell.
  bool validation_call_clean = false;
  std::optional<TimingResult> timing;
  double settle_seconds = 0;  // window: the wait for the device to settle before it
  bool checked = false;       // window: its checked calls ran (and the outcome says how)
  std::string fatal;          // a FatalError in the worker: the host throws it again
  // In the host only (not in the message): a spawned worker started for this phase took this
  // long to start and set up, before the phase began.
  double worker_setup_seconds = 0;
};

std::string encode(const TrialRequest& request);
std::optional<TrialRequest> decode_trial_request(std::string_view bytes);
std::string encode(const TrialAnswer& answer);
std::optional<TrialAnswer> decode_trial_answer(std::string_view bytes);
std::string encode(const TrialSetup& setup);
std::optional<TrialSetup> decode_trial_setup(std::string_view bytes);

}  // namespace tunekit::detail
