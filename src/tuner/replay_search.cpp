#include "tunekit/replay_search.hpp"

#include <limits>
#include <memory>

#include "tunekit/tuner.hpp"

namespace tunekit {

ReplayRun replay_search(const Recording& recording, const ReplaySearchOptions& options) {
  ReplayDeviceOptions device_options;
  device_options.reading = options.reading;
  device_options.seed = options.seed;
  device_options.pace = options.pace;
  ReplayDevice device(recording, device_options);
  const std::unique_ptr<OpBase> op = make_replay_op(recording);
  TunerOptions t;
  t.persist.store = "none";
  t.decide.strategy = options.strategy;
  t.decide.schedule = options.schedule;
  t.decide.seed = options.seed;
  t.decide.budget_evaluations = options.budget_evaluations;
  t.decide.budget_seconds = options.budget_seconds;
  t.measure.now = [&device] { return device.simulated_seconds(); };
  // A recording has one reading per configuration: confirming a winner in pairs would only
  // spend simulated time re-reading the same numbers.
  t.decide.confirm_pairs = 0;
  t.decide.finalists = 0;  // nor timing the best again in a final race
  t.hooks.log = options.log;
  if (options.share) {
    t.persist.store = options.store;
    t.decide.mode = Mode::force;  // a replay searches, whatever the store holds
    t.decide.share.enabled = true;
  }
  Tuner tuner(device, t);
  ReplayRun run;
  run.report = tuner.tune(*op, recording_key(recording));
  run.history = History(recording.size());
  for (const CandidateReport& c : run.report.candidates) {
    const bool not_started = c.outcome.status == Status::stopped && !c.timing;
    if (not_started || c.outcome.status == Status::skipped) continue;
    Evaluation e;
    e.index = c.index;
    e.status = c.outcome.status;
    const RecordedResult& recorded = recording.result(c.index);
    e.value = c.outcome.ok() || c.outcome.status == Status::hopeless
                  ? recorded.time_ms
                  : std::numeric_limits<double>::infinity();
    run.history.add(e);
  }
  run.simulated_seconds = device.simulated_seconds();
  if (const Evaluation* best = run.history.best()) {
    run.pick = best->index, run.pick_ms = best->value;
  } else if (const std::size_t w = run.report.winner;
             w < recording.size() && recording.result(w).status == Status::ok) {
    run.pick = w, run.pick_ms = recording.result(w).time_ms;
  }
  return run;
}

}  // namespace tunekit
