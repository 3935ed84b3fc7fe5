// One decision of the HTML report (private to src/report): the same section for a live run
// (TuneReport) and for a stored entry (StoredChoice), built from what both carry.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/model_report.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

struct DecisionView {
  std::string anchor;  // the section's id (fleet rows link to it)
  std::string op, key, winner, default_name;
  std::vector<std::pair<std::string, std::string>> facts;  // label, value (shown as given)
  std::vector<CandidateReport> candidates;                 // in evaluation order
  const ModelReport* model = nullptr;  // the cost model's view of this key, when made
  std::string model_note;              // why there is none
};

DecisionView decision_view(const TuneReport& report);
DecisionView decision_view(const StoredChoice& choice, std::string anchor);

// Default seconds / winner seconds from the evidence (0 when either was not measured).
double stored_speedup(const StoredChoice& choice);

// <section>: the facts, the samples (strip/box plot), speed vs the default (a table), the
// best-so-far curves over evaluations and time, model score vs measured (scatter with
// Spearman), failures by class. A plot without data says so in words.
std::string decision_section(const DecisionView& view);

// The scatter of model score against measured seconds with Spearman's rho (or why not).
// `measured` gives each model candidate's measurement (nullopt: none).
std::string model_figure(const ModelReport& model,
                         const std::vector<std::optional<double>>& measured);

}  // namespace tunekit::detail
