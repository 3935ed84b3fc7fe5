// A recording (Kernel Tuner cache / T4 file) as a stored choice with its evidence.
#include <algorithm>
#include <utility>

#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"
#include "tunekit/stats.hpp"

namespace tunekit {
namespace {

// One recorded configuration as the tuner would have reported it.
CandidateReport candidate_of(const Recording& recording, std::size_t i) {
  const RecordedResult& r = recording.result(i);
  CandidateReport c;
  c.index = i;
  c.config = recording.space().config(i).text();
  c.name = c.config;
  c.outcome = {r.status, r.status == Status::ok ? std::string() : "recorded as " + r.failure};
  if (r.status != Status::ok) return c;
  c.score = r.time_ms / 1000.0;
  TimingResult t;
  t.clock = recording.format() == Recording::Format::t4 ? "recorded (T4 results file)"
                                                        : "recorded (Kernel Tuner cache)";
  for (double ms : r.times_ms) t.samples.push_back(ms / 1000.0);
  if (t.samples.empty()) t.samples.push_back(c.score);
  summarise(t, TimingOptions{});
  t.stalled_fraction = 0;  // recorded samples: nothing here says how they were disturbed
  t.contended = false;
  t.dispatches = static_cast<long long>(t.samples.size());
  t.wall_seconds = r.benchmark_ms / 1000.0;
  c.timing = std::move(t);
  return c;
}

}  // namespace

ImportedRecording import_recording(const Recording& recording, const Toolchain& toolchain) {
  const std::optional<std::size_t> best = recording.best();
  if (!best)
    throw UsageError("the recording " + recording.source() +
                     " has no valid configuration: there is no choice to store");
  ImportedRecording out;
  out.configurations = recording.size();
  out.valid = recording.valid_count();
  out.best = *best;
  out.best_ms = recording.result(*best).time_ms;

  Identity& id = out.identity;
  id.device.backend = "kt";
  id.device.product =
      recording.device_name().empty() ? "unnamed recorded device" : recording.device_name();
  id.device.known = true;
  id.toolchain = toolchain;
  id.op = recording_op_name(recording);
  id.key = recording_key(recording);
  // The candidate set is the recorded configurations, in space order.
  std::string manifest = id.op + "\n";
  for (std::size_t i = 0; i < recording.size(); ++i)
    manifest += recording.space().config(i).text() + "\n";
  id.candidates = Digest::of(manifest);

  TuneReport report;
  report.candidates.reserve(recording.size());
  for (std::size_t i = 0; i < recording.size(); ++i) {
    report.candidates.push_back(candidate_of(recording, i));
    report.candidates.back().winner = i == *best;
  }
  const std::string winner = recording.space().config(*best).text();
  out.choice =
      make_stored_choice(id, winner, winner, std::move(report.candidates), /*budget_cut=*/false);
  return out;
}

}  // namespace tunekit
