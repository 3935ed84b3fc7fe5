// TuneReport: what one call to the tuner did, with the evidence behind it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/candidate.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/timing.hpp"

namespace tunekit {

// Where an answer came from.
enum class Source {
  searched,            // measured now
  memory_hit,          // this process's table
  cache_replay,        // persistent store
  artifact_replay,     // deployable artifact
  use_default,         // mode off, another caller is tuning, or a nested request
  search_disabled,     // mode cached and nothing stored
  pre_search_failure,  // inputs or reference could not be produced: default served
  model,               // ranked by the cost model, nothing measured (model_default)
};
std::string_view to_string(Source source);  // use_default prints as "default"

enum class Statistic { median, min };
std::string_view to_string(Statistic statistic);

struct CandidateReport {
  std::size_t index = 0;
  std::string name;
  std::string config;  // Config::text()
  Numerics numerics = Numerics::bitwise;
  int group = 0;
  int preference = 0;
  bool is_default = false;
  bool winner = false;
  Outcome outcome;                     // ok only when validated and measured cleanly
  std::optional<TimingResult> timing;  // the accepted (or last) window
  int retries = 0;                     // contended windows retried
  double score = 0;                    // ranking statistic in seconds (ok only)
  double vs_default = 0;               // default's score / this score (>1: faster)
};

struct TuneReport {
  std::string op;
  std::string op_checksum;  // hex
  std::string key;          // text form
  std::string key_digest;   // hex
  std::string device;       // product name
  Source source = Source::use_default;
  std::string reason;  // why this source (e.g. "another caller is tuning this key")
  std::size_t winner = 0;
  std::string winner_name;
  std::size_t default_index = 0;
  std::string default_name;
  double winner_score = 0;   // seconds, the ranking statistic
  double default_score = 0;  // seconds; 0 when the default was not measured
  double speedup = 1;        // default_score / winner_score
  Statistic statistic = Statistic::median;
  double tie_band = 0.02;
  Numerics numerics_policy = Numerics::reassociates;
  std::vector<CandidateReport> candidates;  // empty unless searched
  std::string search;                       // the search that decided ("exhaustive", "racing")
  // Paired confirmation of a non-default winner against the default (when it ran).
  bool confirmed = false;
  double paired_ratio = 0;  // winner / default, median of the pairs
  int paired_pairs = 0;
  double seconds_validating = 0;
  double seconds_measuring = 0;
  double seconds_total = 0;
};

}  // namespace tunekit
