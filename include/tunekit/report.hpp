// TuneReport: what one call to the tuner did, with the evidence behind it.
#pragma once

#include <cstddef>
#include <cstdint>
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
  searched,                 // measured now
  memory_hit,               // this process's table
  cache_replay,             // persistent store
  artifact_replay,          // deployable artifact
  use_default,              // mode off, another caller is tuning, or a nested request
  search_disabled,          // mode cached and nothing stored
  pre_search_failure,       // inputs or reference could not be produced: default served
  model,                    // ranked by the cost model, nothing measured (model_default)
  budget_floor_unmeasured,  // the budget was spent before the default was measured
  stale_replay,             // mode cached: the known choice failed re-validation, the default
                            // serves (TuneReport::stale says why)
};
std::string_view to_string(Source source);  // use_default prints as "default"

enum class Statistic { median, min };
std::string_view to_string(Statistic statistic);

struct CandidateReport {
  std::size_t index = 0;  // the candidate's index in its op (a point of its space)
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
  double compile_seconds = 0;          // its build in the compile pass (0: nothing to build)
  // Its checked calls ran after a window (MeasureOptions::check_calls). Only a candidate that
  // could still win is checked: one whose readings trailed the best by more than the tie band
  // is ok without them (it cannot be chosen), under racing only a round's leader is checked,
  // and a winner not yet checked is checked before the decision stands.
  bool checked = false;
  // Timed again in the final race (TuneReport::final_race): its timing and score are the
  // race's, and search_score is what the search's window read (0: not a finalist).
  bool finalist = false;
  double search_score = 0;
};

// What a budget allowed and what it stopped (DESIGN §7).
struct BudgetReport {
  double seconds = 0;           // the wall-clock budget (0: none)
  std::size_t evaluations = 0;  // the evaluation budget, the default excluded (0: none)
  bool cut = false;             // the search ended before its strategy did: partial
  std::string stopped;          // what the budget stopped, in words (empty: nothing)
  // Held back at the end of the budget: the winner's rebuild (one projected build) and the
  // decision's paired confirmations at their floor (at most confirm_share of the budget).
  double reserve_seconds = 0;
  std::size_t not_started = 0;  // proposed points not started for lack of time
};

// The final race of a search (DecideOptions::finalists): the best readings re-timed in
// interleaved windows, the decision taken on those.
struct FinalRace {
  std::size_t finalists = 0;  // points timed again (0: it did not run, `note` says why)
  double seconds = 0;         // its wall time
  std::string search_pick;    // what the search's own readings would have picked
  std::string note;           // why it did not run, or what cut it (empty: it ran)
};

// How sure a measured decision is (issue #17): the winner against the runner-up (the best
// other candidate measured cleanly), from both windows' medians and MADs, and the paired
// confirmation against the default when it ran. Computed when the search decides; kept in the
// store with the search record; shown by the reporters, `cache show` and `explain`.
struct DecisionConfidence {
  std::string runner_up;     // empty: no other candidate measured cleanly (nothing to compare)
  double advantage = 0;      // the runner-up's score / the winner's (> 1: the winner is faster)
  double advantage_low = 0;  // approximate 95 % lower bound of that ratio
  // The paired confirmation, when it confirmed the winner: the 95 % upper bound of winner /
  // default (0: it did not run, or kept the default).
  double paired_high = 0;
  // The pairing with the op's best anchor (a library solution), when the measured winner was
  // not an anchor: the anchor's name; when the winner stood, the pairs' median winner / anchor
  // and its 95 % upper bound (0: the pairs were too noisy to bound it); both 0 when the anchor
  // was kept.
  std::string anchor;
  double anchor_paired_ratio = 0;
  double anchor_paired_high = 0;
  // The tie pairing (TuneReport::tie_pairing), when the pairs decided for the winner: the
  // other side, and the pairs' median winner / it (under 1 + half the tie band: the winner
  // kept by the tie order; under 1 / (1 + half the band): the rival that took the decision).
  // Empty and 0 otherwise (not paired, too few pairs, or a pick kept because the rival the
  // pairs preferred failed its checked calls).
  std::string tie_rival;
  double tie_paired_ratio = 0;
  // "clear": advantage_low is over 1 + the tie band; "in the tie band": the winner may be no
  // more than the band ahead; "within noise": the runner-up may be as fast (advantage_low
  // <= 1); "kept by the tie order (the pairs put the runner-up less than half the band
  // ahead)": advantage < 1, the runner-up the tie pairing's rival; "taken by the library
  // anchor in pairs (the runner-up not surely faster than it)": advantage < 1, the anchor
  // pairing gave the anchor the decision over the runner-up; "kept by the decision rules
  // (runner-up faster)": advantage < 1 otherwise, the default or a preferred candidate kept
  // within the tie band or by a paired confirmation; "no runner-up".
  std::string verdict;
  // The share of the measured candidates' kept readings during which their threads waited for
  // a CPU (TimingResult::waited): over a few percent, the machine was busy while deciding and
  // the decision is the best under that load.
  double waited_share = 0;
};

// The measured winner paired A B B A with a rival (TuneReport::anchor_pairing, tie_pairing):
// the rival takes the decision when the pairs' median winner / rival ratio is not under the
// pairing's bar.
struct PairedFinal {
  std::string rival;            // the rival's candidate name (the anchor, the tied rival)
  std::string candidate;        // the winner it was paired with
  int pairs = 0;                // pairs scored
  double ratio = 0;             // candidate / rival, median of the pairs (0: too few pairs)
  double ratio_high = 0;        // its 95 % upper bound (0: the pairs too noisy to bound it)
  bool kept_candidate = false;  // the candidate stood (else the rival became the winner)
  std::string why;              // how it ended, in words
};

// Where the host ran two of the device's CPUs around a search (Device::cross_cpu_round_trip):
// the round trip of a cache line between them, in ns, before and after it; 0 where not read.
// On a VM the host runs its vCPUs on cores that share a cache or on cores that do not, for
// minutes at a time, and multi-threaded candidates whose threads share data run up to 2x slower
// in the second placement: their readings compare only within one placement.
struct CpuPlacement {
  double before_ns = 0;
  double after_ns = 0;
  // While the search ran (MeasureOptions::placement): its lowest reading, how often a reading
  // was far and the search waited for the CPUs to be near again, how long in all, and how
  // often windows ran with the CPUs far: a wait that ended with them still far (its time
  // spent), or windows let run at a reading a later, lower one showed to be far.
  double lowest_ns = 0;
  int waits = 0;
  double waited_seconds = 0;
  int ran_far = 0;
  bool measured() const { return before_ns > 0 && after_ns > 0; }
  // The host moved the CPUs during the search: one reading over twice the other.
  bool changed() const {
    const bool rose = after_ns > before_ns;
    return measured() && (rose ? after_ns : before_ns) > 2 * (rose ? before_ns : after_ns);
  }
  // Windows of the search may have run in two placements: it began far from where it later
  // found the CPUs, a wait ended with them still far, or they were far after it (the windows
  // since the last reading may have been). A move the waits undid mixes nothing; without
  // readings during the search, a move between before and after is taken to.
  bool mixed() const {
    if (!measured()) return false;
    if (!(lowest_ns > 0)) return changed();
    return ran_far > 0 || before_ns > 2 * lowest_ns || after_ns > 2 * lowest_ns;
  }
};

struct TuneReport {
  std::string op;
  std::string op_checksum;  // hex
  std::string key;          // text form (a bucketed op: the bucket's representative)
  std::string bucket;       // a bucketed op: the bucket served, e.g. "n: 65..128 (pow2)"
  std::string key_digest;   // hex
  std::string device;       // product name
  Source source = Source::use_default;
  std::string reason;  // why this source (e.g. "another caller is tuning this key")
  // Why a stored or artifact choice for this key was not served (failed re-validation, stale
  // since an earlier failure); empty when none was passed over.
  std::string stale;
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
  // The candidates the search touched, in evaluation order (the default first); empty unless
  // searched. A space op's untouched points are not listed.
  std::vector<CandidateReport> candidates;
  std::size_t space_size = 0;  // candidates the op has
  // Of them, the points that compute differently for this key (Op::effective_config): the
  // search proposes only these. space_size where the op does not say; 0 when not searched.
  std::size_t distinct_points = 0;
  std::string strategy;     // the strategy spec that proposed ("random", "genetic:pop=20")
  std::string schedule;     // how windows were shared ("full", "racing:round=4")
  std::uint64_t seed = 0;   // the strategy's seed
  std::string stop_reason;  // why the search ended ("space exhausted", "time budget", ...)
  BudgetReport budget;
  // Paired confirmation of a non-default winner against the default (when it ran).
  bool confirmed = false;
  double paired_ratio = 0;  // winner / default, median of the pairs
  int paired_pairs = 0;
  // Pairing of the tie-break's pick with the fastest reading it was tied with (both own
  // kernels, or both anchors): the rival takes the decision when the pairs show it faster by
  // half the tie band or more, so the tie order does not cost a measurable difference.
  std::optional<PairedFinal> tie_pairing;
  // Pairing of a measured winner that is not one of the op's anchors with the best anchor
  // measured (a library solution): the winner stands only when the pairs' median ratio is
  // under 1 / (1 + tie band), so a drift between their windows does not lose the library.
  std::optional<PairedFinal> anchor_pairing;
  FinalRace final_race;
  std::optional<DecisionConfidence> confidence;  // set when a search decided
  double seconds_compiling = 0;                  // wall time of the compile passes
  // Where trials ran (DESIGN §11): "worker" (a worker process each), or "in_process" (with
  // the op's reason when it opted out).
  std::string isolation;
  double seconds_validating = 0;
  double seconds_measuring = 0;
  // Of seconds_measuring: waiting before windows for what the last one left running to stop
  // (Device::settle, TimingOptions::settle_seconds).
  double seconds_settling = 0;
  double seconds_total = 0;
  CpuPlacement cpu_placement;  // read around the search, where the device can tell

  // The entry of candidate `index` (nullptr when the search did not touch it).
  const CandidateReport* find(std::size_t index) const;
  CandidateReport* find(std::size_t index);
};

}  // namespace tunekit
