// What one search of the tuner shares between its evaluator and its schedule: inputs and
// references, the report (only the candidates touched, in evaluation order), admission
// (numerics, eligibility, then the trial runner: prepare and validation, in a worker process
// when the trials are isolated), measured windows with one retry, the decision and the paired
// confirmations against the op's best anchor and the default.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/stats.hpp"
#include "tunekit/tuner_options.hpp"
#include "tunekit/validate.hpp"
#include "tuner/confirmation_size.hpp"
#include "tuner/placement_guard.hpp"
#include "tuner/search_budget.hpp"
#include "tuner/trial_runner.hpp"

namespace tunekit::detail {

class SearchContext {
 public:
  SearchContext(Device& device, const OpBase& op, const Key& key, const TunerOptions& options);
  ~SearchContext();
  SearchContext(const SearchContext&) = delete;
  SearchContext& operator=(const SearchContext&) = delete;

  TuneReport& report() { return r_; }
  const TunerOptions& options() const { return options_; }
  Device& device() { return device_; }
  const OpBase& op() const { return op_; }
  const Key& key() const { return key_; }
  std::size_t default_index() const { return r_.default_index; }

  // Where the host runs the CPUs: read before the search (TuneReport::cpu_placement), then
  // watched before windows (PlacementGuard); end_placement() reads it after and reports.
  void start_placement();
  void end_placement();

  // Inputs and reference; false (source pre_search_failure) when they cannot be produced.
  // `input_sets`: how many of the op's input sets admission validates on (0: all of them).
  bool prepare_inputs(int input_sets = 0);

  // The report entry of candidate `index`, created (status skipped, "not reached") on first
  // use. The reference is valid until the next entry() of a new index.
  CandidateReport& entry(std::size_t index);
  const CandidateReport* find(std::size_t index) const { return r_.find(index); }

  // A trial for building only (the compile pass): no buffers, safe to build() on any thread.
  std::unique_ptr<Trial> build_trial(std::size_t index);
  // Records the compile pass's verdict on a candidate: its build time, and on failure its
  // final outcome. Built candidates are not built again by admit().
  void built(std::size_t index, const Outcome& outcome, double seconds);

  // A candidate that failed live for this key (DESIGN §7): admit() rejects it with `reason`.
  void ban(std::size_t index, std::string reason) { banned_[index] = std::move(reason); }

  // Admission (numerics, eligibility), prepare and validation of one candidate. On success
  // (true) the candidate is ready for windows until drop_trial(); otherwise the outcome is
  // recorded.
  bool admit(std::size_t index);
  // Readies a validated candidate for windows again (racing and the paired confirmation
  // re-prepare rather than keep several candidates' buffers alive).
  bool acquire(std::size_t index);
  void drop_trial(std::size_t index);
  // Trials alive in this process now (at most one while timing, DESIGN §3).
  std::size_t live_trials() const;
  // Whether trials run in worker processes (DESIGN §11).
  bool isolated() const { return isolated_; }

  // Which windows of a candidate not yet checked are followed by its checked calls: a
  // contender's (its window read within the tie band of the best checked reading, CheckAfter),
  // every one, or none (racing checks its rounds' leaders instead, holds()).
  enum class CheckWhen { contender, always, never };
  // One timing window; a contended window is retried once, then refused.
  TimingResult measure(std::size_t index, const TimingOptions& timing,
                       CheckWhen when = CheckWhen::contender);
  // Candidate `index`'s checked calls: success when it was checked already (or no checks are
  // asked) or is checked now by a short window and its calls; else the failure, not recorded.
  Outcome check(std::size_t index);
  // Whether candidate `index` may be chosen: check(), with a failure recorded as its outcome
  // (a lost device is a FatalError, as in finish()).
  bool holds(std::size_t index);
  // The search's timing options for candidate `index`: evictor, and the budget's stop() for
  // every candidate but the default (the floor is exempt).
  TimingOptions timing_options(std::size_t index) const;
  // Set by the evaluator: asked before every batch of a window (true: stop it).
  void set_stop(std::function<bool()> stop) { stop_ = std::move(stop); }
  // Seconds left in the search's budget (unset: no budget): the paired confirmation fits in it.
  void set_time_left(std::function<double()> left) { time_left_ = std::move(left); }
  // Seconds until stop() turns true (unset: never): a spawned worker stops by itself then.
  void set_seconds_to_stop(std::function<double()> seconds) {
    seconds_to_stop_ = std::move(seconds);
  }
  // How many candidates progress events count towards (the space, or what the budget allows).
  void set_progress_total(std::size_t total) { total_ = total; }

  // Records a final outcome (and score from the timing) and reports progress.
  void finish(std::size_t index, Outcome outcome, std::optional<TimingResult> timing);

  // The final race (final_race.cpp): the finalists (finalists()) timed again in racing's
  // rounds — as many, in that order, as their first rounds fit in `room()` seconds (the budget's
  // time left less the pairings' floors; infinite without a budget) — each window started only
  // when `may_start` says so; the decision is then taken on their fresh readings (refresh).
  // Fills TuneReport::final_race.
  void final_race(const std::function<bool(std::size_t, double)>& may_start,
                  const std::function<double()>& room);
  // The final race's points: the ok readings within finalist_band of the best, at most
  // `finalists` of them, fastest first, with the best library anchor second whatever its
  // reading (unless those were raced together already), and the default when it is within the
  // band (it wins its ties); fewer than two readings within the band: no race.
  std::vector<std::size_t> finalists() const;
  // A finalist's fresh timing replaces its search reading (kept as search_score).
  void refresh(std::size_t index, TimingResult fresh);
  // The points of one racing batch were raced together: their readings share minutes.
  void raced_together(std::span<const std::size_t> points);
  // Whether all of `points` were timed in one racing batch (no final race needed).
  bool raced_already(const std::vector<std::size_t>& points) const;

  // Decides the winner among ok candidates (tie band), then confirms a non-default winner
  // with paired A B B A windows against the default. Fills the report's decision fields.
  void choose();

  double score(const TimingResult& t) const;
  // The projected cost of the decision within `cap` seconds: the check of a pick not yet
  // checked, then the paired confirmations at their floor (paired.min_pairs + 2 pairs of one
  // launch a side) against the default, the best anchor and a tied rival, where they would
  // run, each only if it fits in what the ones before it left of `cap` (a floor that cannot
  // fit is not held: those pairs would not run) (0: no incumbent or paired confirmation off).
  // Projected by finish(); the budget holds it back (SearchBudget::hold_for_decision).
  double decision_cost(double cap) const;
  // What starting point `index` costs before its window, on the budget's clock: a point not
  // yet admitted, the mean admission so far (prepare, build, validation: the budget does not
  // cut one); an admitted one (a racing round), preparing its trial again.
  double projected_start(std::size_t index) const {
    return validated_.count(index) ? prepare_seconds() : admission_.value();
  }
  // What an admitted point's first window of `samples` is projected to cost: preparing it again,
  // then its warmup and samples at its validation run's reading (0 before its admission).
  double first_window_seconds(std::size_t index, int samples) const;
  // What preparing a trial again is projected to cost: the mean acquire() so far, or, before
  // the first, the mean admission (which prepares and validates).
  double prepare_seconds() const;
  // The best ok score so far (0: none): the incumbent hopeless cuts judge by.
  double incumbent() const { return incumbent_; }

 private:
  // How pairing the winner with a reference (the default, an anchor) ended.
  struct PairedRun {
    enum class End { unaffordable, not_prepared, threw, reference_failed, winner_failed, scored };
    End end = End::unaffordable;
    int affordable = 0;        // the pairs the budget allowed
    Outcome failure;           // the failed side's outcome (reference_failed, winner_failed)
    stats::PairedScore score;  // scored: winner / reference
  };
  // A B B A windows of the winner against `reference`, sized by their measured gap, in the
  // budget's time left less `keep` seconds.
  // `bar`: the ratio the pairs are judged against (their sign test, paired_score).
  PairedRun run_pairs(std::size_t reference, double keep, double bar);
  // `pairs` pairs of windows of `launches` launches a side (each side's reading into `ref` and
  // `cand`: the median of three or more launches, the fastest of fewer); the side whose window
  // failed, if one did (the pairs end there).
  std::optional<std::pair<std::size_t, Outcome>> paired_windows(std::size_t reference, int pairs,
                                                                int launches,
                                                                std::vector<double>& ref,
                                                                std::vector<double>& cand);
  // The winner against the default: it stands only when surely faster by the tie band.
  void confirm();
  // The confirmation's pairs taken once more when the first were too noisy to score; the first
  // stand when the second cannot be taken.
  PairedRun confirmation_pairs_once_more(PairedRun first, double needed);
  // A final pairing of the winner with a rival: the rival takes the decision when the pairs'
  // median winner / rival ratio is not under `bar` (paired_verdict), in the time left less
  // `keep` seconds (the later pairings' floors).
  struct FinalPairing {
    std::size_t rival = 0;
    double bar = 1;
    double keep = 0;
    std::string_view what;  // "the library anchor", "the tied rival": for the reasons
  };
  void pair_final(const FinalPairing& f, PairedFinal& p);
  // The rival becomes the winner once it holds; one that fails its checked calls leaves the
  // measured winner, or the decision again when that one failed in the pairs.
  void take_rival(const FinalPairing& f, std::size_t win, PairedFinal& p);
  // The winner against the best anchor measured, when the winner is not an anchor: the anchor
  // takes the decision unless the winner is faster by the tie band in pairs.
  void pair_with_anchor();
  // The tie-break's pick against the fastest reading it was tied with (tied_rival): the rival
  // takes the decision when faster by half the tie band in pairs.
  void pair_with_tied_rival();
  // The fastest ok non-default reading when decide() picked `pick` over it by the tie order,
  // both of one kind (own kernels, or anchors); nullopt when there is none to pair.
  std::optional<std::size_t> tied_rival(std::size_t pick) const;
  using Floor = DecisionPart;
  std::optional<std::size_t> best_anchor() const;
  const std::vector<std::size_t>& anchors() const;  // the op's anchor indices, cached
  void project_decision_cost();
  // The later pairings' floors that fit in the time the budget has left (all of them without
  // a budget): what an earlier pairing keeps out of its own time.
  double kept_for(std::initializer_list<Floor> floors) const;
  // One A B B A pair's projected seconds of candidates `a` and `b`, each side `launches`
  // launches, the warmup launch a quiescing op's window adds, and the mean cost of a window
  // beyond its launches (0: a side has no reading).
  double pair_seconds(std::size_t a, std::size_t b, int launches) const;
  // A confirmation's floor: paired.min_pairs + 2 pairs of one launch a side, and preparing
  // both sides again (floor_of(a, b).whole).
  double floor_seconds(std::size_t a, std::size_t b) const;
  Floor floor_of(std::size_t a, std::size_t b) const;
  // The untimed calls a window begins with: one where the op quiesces its candidates
  // (trial_runner.cpp window_phase restarts what the quiesce stopped).
  int warmup_calls() const { return op_.quiesces() ? 1 : 0; }
  bool is_anchor(std::size_t index) const;
  // The pairs that fit in the time left less `keep` seconds (all of them without a budget).
  int affordable_pairs(std::size_t reference, int launches, double keep = 0) const;
  // The pairs and launches a side the measured gap to `reference` calls for
  // (confirmation_size.hpp), within confirm_share.
  ConfirmationSize sized_confirmation(std::size_t reference, double bar) const;
  void choose_runner();
  WorkerProcess::Spawn spawn_worker(std::uint64_t memory) const;
  double rebuild_allowance(std::size_t index) const;
  // One window through the runner, with checked calls after it as `when` says (a contender:
  // its window read within the tie band of the best checked reading, CheckAfter). The
  // timing's functions are those of candidate `functions_of` (default: `index`).
  TimingResult window(std::size_t index, const TimingOptions& timing,
                      CheckWhen when = CheckWhen::contender,
                      std::optional<std::size_t> functions_of = std::nullopt);
  // A first window that need not run: the candidate's validation runs on two input sets, two
  // cold readings, are both far behind the best measured so far (far_behind_cut's rule on
  // them, with `timing`'s ratios) — or its one validation run is, known not to have waited for
  // a CPU and past the line by timing.lone_cut_seconds (lone_cut_over).
  std::optional<TimingResult> cut_on_validation(std::size_t index,
                                                const TimingOptions& timing) const;
  // The time limit of a worker's phase (DESIGN §11): from the candidate's own validation
  // time, the incumbent and the budget, with a floor; 0 when trials are not isolated.
  double validation_limit(std::size_t index) const;
  double window_limit(std::size_t index, const TimingOptions& timing) const;
  // The validation run's seconds from which admission validates the further input sets too
  // (TrialRunner::admit; 0: always): those that may put the candidate far behind on two cold
  // readings (cut_on_validation). The others are validated on them with their checked calls,
  // which only candidates that could win get.
  double more_sets_over(std::size_t index) const;
  // The validation run's seconds from which one reading known clean cuts the candidate alone
  // (far_behind_ratio x the incumbent + lone_cut_seconds; cut_on_validation; admission then
  // leaves the further sets to a window it will not get); +inf where no such cut is possible.
  double lone_cut_over(std::size_t index) const;
  // What its checked calls add for the further input sets not yet validated (a run at `call`
  // seconds and a trial prepared, each): budget projections count it.
  double more_sets_seconds(std::size_t index, double call) const;

  using Wall = std::chrono::steady_clock;
  Device& device_;
  const OpBase& op_;
  const Key& key_;
  const TunerOptions& options_;
  TuneReport r_;
  std::unordered_map<std::size_t, std::size_t> position_;  // index -> r_.candidates position
  std::optional<TrialInputSet> input_set_;                 // made by prepare_inputs
  std::unique_ptr<TrialRunner> runner_;
  bool isolated_ = false;
  std::unordered_map<std::size_t, bool> built_;        // index -> built (compile pass or admit)
  std::unordered_map<std::size_t, bool> checked_;      // index -> its checked calls ran
  std::unordered_map<std::size_t, double> validated_;  // index -> seconds its admission took
  // index -> its validation run's launch on the device clock (TimingOptions::prior_reading)
  std::unordered_map<std::size_t, double> validation_call_;
  // index -> the fastest of its further input sets' validation runs on that clock (0: none)
  std::unordered_map<std::size_t, double> validation_more_;
  // index -> the lone cut's line its admission was sent (AdmitCuts::lone_cut_over), the number
  // the worker judged by; +inf when its validation run was not known clean (TrialAnswer).
  std::unordered_map<std::size_t, double> lone_cut_line_;
  std::unordered_set<std::size_t> windowed_;  // indices measure() was asked for at least once
  // Indices validated on the further input sets (at admission or with their checked calls).
  std::unordered_set<std::size_t> validated_more_;
  std::unordered_map<std::size_t, std::string> banned_;  // index -> why
  double best_checked_ = 0;  // the best score of a checked window (0: none yet)
  std::function<bool()> stop_;
  std::function<double()> time_left_;
  std::function<double()> seconds_to_stop_;
  bool spawned_ = false;  // trials in a spawned worker (Device::Workers::spawned)
  double incumbent_ = 0;
  std::size_t incumbent_index_ = 0;
  // The decision's projected parts (project_decision_cost), in the order they are held.
  struct DecisionFloors {
    double check = 0;
    Floor default_pairs, anchor_pairs, tie_pairs;
    Floor final_race;  // held last: the pairings come first
  };
  // The final race's projected cost: each finalist's first two rounds (racing's min_samples)
  // and preparing it for each (first_rounds_seconds); the finalists of `points`, in order,
  // whose first rounds fit in `seconds` (an anchor that does not fit is passed over).
  Floor final_race_floor() const;
  double first_rounds_seconds(std::size_t index) const;
  std::vector<std::size_t> fitting_finalists(const std::vector<std::size_t>& points,
                                             double seconds) const;
  bool final_race_started_ = false;               // its part is no longer held (it is being spent)
  std::unordered_map<std::size_t, int> race_of_;  // index -> the racing batch that timed it
  int races_ = 0;
  DecisionFloors decision_floors_;
  struct Mean {
    double sum = 0;
    int count = 0;
    void add(double x) { sum += std::max(0.0, x), ++count; }
    double value() const { return count > 0 ? sum / count : 0; }
  };
  double budget_now() const;  // the budget's clock (measure.now, else the host's)
  Mean window_overhead_;      // seconds a window took beyond its timed launches (unchecked windows)
  Mean admission_;            // seconds an admission took (prepare, build, validation)
  Mean acquisition_;          // seconds acquire() took (a trial prepared again)
  mutable std::optional<std::vector<std::size_t>> anchors_;
  double paired_high_ = 0;     // the paired confirmation's bound of winner / default, when scored
  std::string paired_retake_;  // why the confirmation was taken once more (empty: it was not)
  // On the budget's clock (budget_now): when the search began, and what the decision's
  // pairings have spent — the confirmation share is of the first less the second.
  double started_ = 0;
  double paired_seconds_ = 0;
  PlacementGuard placement_;
  std::size_t finished_ = 0;
  std::size_t total_ = 0;
};

}  // namespace tunekit::detail
