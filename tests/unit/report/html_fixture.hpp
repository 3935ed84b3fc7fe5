// A fixed TuneReport and stored entries for the HTML report's tests (golden pages, escaping,
// the browser test): every number is chosen, nothing is measured.
#pragma once

#include <string>
#include <vector>

#include "tunekit/model_report.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"

namespace tunekit::testing {

inline TimingResult html_timing(double median, int count, double spread) {
  TimingResult t;
  t.clock = "steady_clock";
  for (int i = 0; i < count; ++i)
    t.samples.push_back(
        median *
        (1.0 + spread * (static_cast<double>((i * 5) % count) / static_cast<double>(count) - 0.5)));
  t.min = t.samples.empty() ? 0 : median * (1.0 - spread / 2);
  t.median = median;
  t.mean = median;
  t.mad = median * spread / 4;
  t.wall_seconds = median * count * 1.5;
  return t;
}

inline CandidateReport html_candidate(std::size_t index, std::string name, Status status,
                                      double median) {
  CandidateReport c;
  c.index = index;
  c.name = std::move(name);
  c.config = "block=" + std::to_string(16 << index);
  c.outcome.status = status;
  c.compile_seconds = 0.002;
  if (status == Status::ok) {
    c.timing = html_timing(median, 16, 0.1);
    c.score = median;
  } else {
    c.outcome.message = std::string(to_string(status)) + ": element 3 got nan";
  }
  return c;
}

// The default (2 ms), four other measured candidates, the winner (0.5 ms), two failures.
inline TuneReport html_fixed_report() {
  TuneReport r;
  r.op = "sgemm";
  r.key = "m=256,n=256,k=256";
  r.device = "Test CPU 9000";
  r.source = Source::searched;
  r.reason = "no stored choice";
  r.default_name = "naive";
  r.strategy = "exhaustive";
  r.schedule = "full";
  r.seed = 1;
  r.stop_reason = "space exhausted";
  r.space_size = 8;
  r.seconds_total = 1.25;
  r.seconds_compiling = 0.016;
  r.seconds_validating = 0.2;
  r.seconds_measuring = 0.9;
  r.isolation = "worker";
  const double medians[] = {2e-3, 1.5e-3, 0, 0.9e-3, 0, 0.5e-3, 0.7e-3, 1.1e-3};
  const char* names[] = {"naive",   "blocked_8", "vec_bad",   "blocked_16",
                         "oom_big", "tiled_4x8", "tiled_2x8", "threads"};
  for (std::size_t i = 0; i < 8; ++i) {
    const Status status = i == 2   ? Status::validation_failed
                          : i == 4 ? Status::out_of_memory
                                   : Status::ok;
    CandidateReport c = html_candidate(i, names[i], status, medians[i]);
    if (status == Status::ok) c.vs_default = 2e-3 / medians[i];
    r.candidates.push_back(std::move(c));
  }
  r.candidates[0].is_default = true;
  r.candidates[5].winner = true;
  r.winner = 5;
  r.winner_name = "tiled_4x8";
  r.winner_score = 0.5e-3;
  r.default_score = 2e-3;
  r.speedup = 4;
  return r;
}

inline StoredChoice html_stored(const TuneReport& r, std::string digest) {
  StoredChoice c;
  c.identity_digest = std::move(digest);
  c.op = r.op;
  c.key = r.key;
  c.device.product = r.device;
  c.winner = r.winner_name;
  c.winner_config = "block=512";
  c.evidence = r.candidates;
  c.search = search_record(r);
  c.created_at = 1796083200;  // 2026-12-01T00:00:00Z
  c.tunekit_version = "0.2.0";
  return c;
}

// The cost model's scores of the fixed report's candidates (the failures unscored).
inline ModelReport html_model(const TuneReport& r) {
  ModelReport m;
  m.op = r.op;
  m.key = r.key;
  m.device = r.device;
  m.winner_name = "tiled_4x8";
  m.default_name = "naive";
  m.envelope_origin = "profile test.json";
  const double scores[] = {1.8e-3, 1.2e-3, 0, 1.0e-3, 0, 0.4e-3, 0.45e-3, 1.3e-3};
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    ModelCandidate c;
    c.index = i;
    c.name = r.candidates[i].name;
    c.is_default = i == 0;
    c.chosen = i == 5;
    c.scored = scores[i] > 0;
    c.time.seconds = scores[i];
    if (r.candidates[i].outcome.ok()) c.measured_seconds = r.candidates[i].score;
    m.candidates.push_back(c);
  }
  return m;
}

}  // namespace tunekit::testing
