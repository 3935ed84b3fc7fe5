// What every search strategy of the tuner shares: inputs and reference, admission (numerics,
// eligibility, prepare), validation, measured windows with one retry, the decision, and the
// paired confirmation against the default.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"
#include "tunekit/validate.hpp"

namespace tunekit::detail {

class SearchContext {
 public:
  SearchContext(Device& device, const OpBase& op, const Key& key, const TunerOptions& options);
  ~SearchContext();

  TuneReport& report() { return r_; }
  const TunerOptions& options() const { return options_; }
  Device& device() { return device_; }
  std::size_t default_index() const { return r_.default_index; }

  // Inputs and reference; false (source pre_search_failure) when they cannot be produced.
  bool prepare_inputs();
  // Plan groups in ascending order, the default's group first among equals.
  std::vector<std::vector<std::size_t>> plan() const;

  // Admission, prepare and validation of one candidate. On success the trial stays prepared
  // (release() with the context or by drop_trial); otherwise the outcome is recorded.
  Trial* admit(std::size_t index);
  void drop_trial(std::size_t index);

  // One timing window; a contended window is retried once, then refused.
  TimingResult measure(std::size_t index, const TimingOptions& timing);
  TimingOptions timing_options() const;

  // Records a final outcome (and score from the timing) and reports progress.
  void finish(std::size_t index, Outcome outcome, std::optional<TimingResult> timing);
  void mark_skipped_after(const std::vector<std::vector<std::size_t>>& plan, std::size_t group);

  // Decides the winner among ok candidates (tie band), then confirms a non-default winner
  // with paired A B B A windows against the default. Fills the report's decision fields.
  void choose();

  double score(const TimingResult& t) const;

  // Model-guided search (DESIGN §6, §9): candidates the cost model ranks below the
  // model_prune cut are left out of the plan (skipped, with their rank); unscored candidates
  // and the default stay. The floor times floor_factor becomes a short-circuit bound.
  void guide(const ModelReport& model);
  // Seconds at or under which a reading ends the search: the larger of TunerOptions::limit
  // and the model's floor times floor_factor (0: none).
  double short_circuit() const;
  // The model's floor times floor_factor alone (0: none); exhaustive searches stop on it.
  double floor_bound() const { return floor_bound_; }
  // Whether the model left admitted candidates unmeasured (pruned, or a floor stop): the
  // search is partial and is stored like a budget cut (DESIGN §7).
  bool model_cut() const { return model_cut_; }
  void mark_model_cut() { model_cut_ = true; }

 private:
  void confirm();
  // A trial for candidate `index`: on the validated workload, cycling through the rotation
  // copies when there are any.
  std::unique_ptr<Trial> make_trial(std::size_t index);

  using Wall = std::chrono::steady_clock;
  Device& device_;
  const OpBase& op_;
  const Key& key_;
  const TunerOptions& options_;
  TuneReport r_;
  std::unique_ptr<Workload> workload_;               // validated against the reference
  std::vector<std::unique_ptr<Workload>> rotation_;  // further input copies for timing
  std::optional<Reference> reference_;
  Tolerance tolerance_;
  std::vector<std::unique_ptr<Trial>> trials_;
  std::vector<bool> pruned_;
  double floor_bound_ = 0;
  bool model_cut_ = false;
  std::size_t position_ = 0;
  std::size_t total_ = 0;
};

}  // namespace tunekit::detail
