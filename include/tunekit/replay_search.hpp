// A search over a recorded space through the live tuner (DESIGN §6 "one loop"): the
// recording's op tuned by Tuner::tune on a ReplayDevice, so strategies, schedules, budgets and
// the compile pass behave exactly as they do on a real device, on simulated time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tunekit/log.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/report.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

struct ReplaySearchOptions {
  std::string strategy = std::string(kDefaultStrategy);
  std::string schedule = "full";
  std::uint64_t seed = 1;
  std::size_t budget_evaluations = 0;  // beyond the default (0: none)
  double budget_seconds = 0;           // simulated seconds (0: none)
  // recorded_time: every reading is the configuration's recorded objective, so a search
  // ranks exactly by the file; sample: recorded samples drawn (seeded).
  ReplayDeviceOptions::Reading reading = ReplayDeviceOptions::Reading::recorded_time;
  // Shared with the workers of a server store (docs/fleet.md "Shared searches": `tunekit
  // worker --dataset` the same file): the search runs in mode force on `store`, and its
  // choice is stored there like any other (under the recorded device's identity).
  bool share = false;
  std::string store = "none";
  double pace = 0;  // ReplayDeviceOptions::pace of this process's device
  Log log;          // the tuner's messages (a queue that cannot be used is warned here)
};

struct ReplayRun {
  TuneReport report;  // the tuner's report (candidates in evaluation order)
  // The evaluations in order, valued by the recorded objective in ms (inf where failed).
  History history{0};
  double simulated_seconds = 0;
  // What the search ships and what it costs by the recording: the best evaluation, or, where
  // nothing was evaluated (a one-point space serves its only point unmeasured), the winner
  // when its recorded result is ok. Empty: nothing that ran.
  std::optional<std::size_t> pick;
  double pick_ms = 0;
};

// UsageError for an unknown strategy or schedule, or a recording without a valid config.
ReplayRun replay_search(const Recording& recording, const ReplaySearchOptions& options);

}  // namespace tunekit
