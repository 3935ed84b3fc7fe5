// ModelReport: what the cost model decided for one (op, key) and why — every candidate with
// its score, its admission under the numerics policy and its stored measurement (DESIGN §7).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/candidate.hpp"
#include "tunekit/cost_model.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/report.hpp"

namespace tunekit {

struct ModelCandidate {
  std::size_t index = 0;
  std::string name;
  std::string config;  // Config::text()
  Numerics numerics = Numerics::bitwise;
  bool is_default = false;
  bool chosen = false;
  Outcome admission;  // ok when the numerics policy and the key admit it
  bool scored = false;
  std::string unscored_why;  // when not scored
  ModelTime time;            // when scored
  double vs_default = 0;     // default's score / this score (>1: the model ranks it faster)
  // 1-based, in the order the decision rule picks admitted, scored candidates (tie band, the
  // default first, then least memory time, then preference): the model's pick is rank 1.
  // 0: not admitted or not scored.
  int rank = 0;
  // The stored measurement of this candidate for this identity, when the store has one.
  std::optional<double> measured_seconds;
  std::string measured_status;  // its outcome in the stored evidence ("ok", "hopeless", ...)
};

struct ModelReport {
  std::string op;
  std::string key;                      // text form
  std::string bucket;                   // a bucketed op: the key's bucket ("n: 65..128 (pow2)")
  std::string device;                   // product the tuner runs on
  Source source = Source::use_default;  // model, or default when the model declined
  std::string reason;                   // why the default stands, when it does
  std::string envelope_origin;          // where the envelope came from; empty: none
  std::optional<Envelope> envelope;
  std::size_t winner = 0;
  std::string winner_name;
  std::size_t default_index = 0;
  std::string default_name;
  double winner_seconds = 0;   // model score; 0 when not scored
  double default_seconds = 0;  // model score; 0 when not scored
  double speedup = 1;          // the model's default / winner
  double floor_seconds = 0;    // compulsory work at peak (lowest over candidates)
  Numerics numerics_policy = Numerics::reassociates;
  double tie_band = 0.02;
  std::string measured_from;    // the store the measurements came from; empty: none
  std::string measured_winner;  // the stored decision's winner (with measured_from)
  // How sure the stored decision was (DecisionConfidence), when the entry recorded it.
  std::optional<DecisionConfidence> measured_confidence;
  // The stored decision's final race (FinalRace), when the entry recorded one (ran or why not).
  std::optional<FinalRace> measured_final_race;
  // Where the host ran the CPUs during the stored decision's search, when it was read.
  std::optional<CpuPlacement> measured_cpu_placement;
  std::vector<ModelCandidate> candidates;
};

// The JSON text of a model report; and a console table (candidates sorted by model rank).
std::string to_json(const ModelReport& report, int indent = 2);
void write_console(const ModelReport& report, std::ostream& out);

}  // namespace tunekit
