// What the stack controller did and why (DESIGN §10): structured failures, the source of each
// answer, counters, and a bounded report per workload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/key.hpp"

namespace tunekit::stack {

// The level a problem lives at. `operator_` because `operator` is a keyword; it prints as
// "operator".
enum class Scope { operator_, graph, application };
std::string_view to_string(Scope scope);
std::optional<Scope> scope_from_string(std::string_view name);

// Why a candidate was not (or is no longer) a choice.
enum class FailureKind {
  ineligible,          // its eligibility check declined the problem; nothing ran
  scratch_over_limit,  // it needs more scratch than the controller allows; nothing ran
  run_failed,          // a trial threw (a std::exception, or TrialError with a failing status)
  out_of_memory,       // a trial threw std::bad_alloc (or TrialError out_of_memory)
  not_measured,        // a trial returned no usable reading (zero, negative, not finite)
  validation_failed,   // its outputs disagree with the reference's beyond tolerance
  no_score,            // measured, but the paired score is none (too few pairs, too noisy)
  reference_failed,    // the reference's own trial failed: nothing can be scored against it
  banned,              // it threw while executing a caller's request of this problem
};
std::string_view to_string(FailureKind kind);

struct Failure {
  FailureKind kind = FailureKind::run_failed;
  std::string message;
  // "validation_failed: element 12 is 3.5, expected 1" — kind and message together.
  std::string text() const;
};

// Why try_execute / select returned what it did.
enum class DecisionSource {
  hit,              // a decision made earlier in this process
  stored,           // a decision read from the store (first use in this process)
  tuned,            // decided now by paired scores (a selection, or the reference kept)
  no_score,         // tuned now, but no alternative got a score: the reference is kept
  only_reference,   // no alternative could be tried (none, all ineligible, banned, too big)
  contender,        // another thread is tuning this problem: the reference, at once
  nested,           // asked from inside a trial (is_tuning()): the reference, at once
  disabled,         // mode disabled: the reference
  cache_only_miss,  // mode cache_only and no decision known: the reference
  banned,           // cache_only: the decision's candidate failed live and was banned, and
                    // nothing re-decides in this mode: the reference
};
std::string_view to_string(DecisionSource source);

// Process-lifetime counters of one controller. Every request is exactly one of a hit, a miss
// or a fallback (contender, nested, disabled); a miss is then tuned (explore) or served the
// reference (cache_only, which also counts a fallback).
struct Stats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t tunes = 0;          // tuning runs completed
  std::uint64_t fallbacks = 0;      // the reference served without a decision behind it
  std::uint64_t rejections = 0;     // candidates declined or failed while tuning
  std::uint64_t invalidations = 0;  // decisions dropped (execution error, dependency change,
                                    // invalidate())
  std::uint64_t bans = 0;           // candidates banned after a live execution error
};

// A lower-scope decision a decision was measured under: which problem (its cache key), which
// candidate set (its checksum) and which candidate it had chosen (empty: none was known).
struct Dependency {
  Scope scope = Scope::operator_;
  Digest key;         // the operator decision's cache key (or the kernel tuner's identity)
  Digest candidates;  // its candidate-set checksum
  std::string chosen;
  friend bool operator==(const Dependency&, const Dependency&) = default;
};

enum class EntryStatus {
  reference,  // the reference (always measured first; its times are the pairs' A side)
  selected,   // the choice: scored and faster than the reference beyond the tie band
  scored,     // scored, but not the choice (slower, tied, or beaten by another)
  no_score,   // measured, but no paired score
  rejected,   // not run: ineligible or over the scratch limit
  failed,     // a trial failed or its outputs did not validate
  banned,     // banned for this problem by an earlier live failure
};
std::string_view to_string(EntryStatus status);

// One candidate's line in a report.
struct ReportEntry {
  std::string candidate;
  int version = 1;
  EntryStatus status = EntryStatus::no_score;
  std::optional<Failure> failure;  // rejected, failed, banned, no_score
  double ratio = 0;                // median candidate / reference time (< 1: faster)
  double relative_mad = 0;
  double ratio_high = 0;  // about 95 % upper bound of the ratio
  int pairs = 0;
  std::string why;  // in words: why this status
};

// What tuning one workload decided, bounded: at most StackOptions::report_entries entries
// (entries_cut says how many were left out; the reference and the selection are always kept).
struct StackReport {
  Scope scope = Scope::operator_;
  std::string problem;    // the problem's name
  std::string signature;  // Key::text() of its exact signature
  Digest workload_digest;
  Digest cache_key;
  std::string selected;  // the chosen candidate's name (the reference when nothing beat it)
  DecisionSource source = DecisionSource::tuned;
  std::vector<ReportEntry> entries;
  std::size_t entries_cut = 0;
  std::vector<Dependency> dependencies;  // what the decision was measured under
  std::string note;                      // e.g. "invalidated: operator decision ... changed"
};

// The report as console text: the decision line, one line per entry (status, paired ratio
// with its relative MAD and pairs, why), how many entries were cut, the dependencies.
// Names and messages are escaped for the terminal.
void write_text(const StackReport& report, std::ostream& out);
// The report as a JSON object (every field; digests as hex).
std::string report_json(const StackReport& report);

}  // namespace tunekit::stack
