// What a worker process tells the host about one phase of a trial: the outcome, the build
// time when it built, and the timing window when it timed. A small binary encoding: the
// bytes come from a process that may have scribbled over its own memory, so decoding checks
// every length and answers nullopt rather than trusting them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tunekit/outcome.hpp"
#include "tunekit/timing.hpp"

namespace tunekit::detail {

struct TrialAnswer {
  Outcome outcome;
  double compile_seconds = 0;  // the build the phase did (0: none)
  std::optional<TimingResult> timing;
  std::string fatal;  // a FatalError in the worker: the host throws it again
};

std::string encode(const TrialAnswer& answer);
std::optional<TrialAnswer> decode_trial_answer(std::string_view bytes);

}  // namespace tunekit::detail
