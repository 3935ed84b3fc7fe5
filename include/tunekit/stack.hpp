// Stack tuning (DESIGN §10): an opt-in controller above single kernels. A Problem (an operator
// choice, a fused or unfused graph, an application plan) has a scope, an exact signature, a
// mandatory reference candidate and a numerical policy; its alternatives are validated against
// the reference and scored by the paired score; the request is executed once, after selection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/identity.hpp"
#include "tunekit/key.hpp"
#include "tunekit/log.hpp"
#include "tunekit/op.hpp"
#include "tunekit/stack_report.hpp"
#include "tunekit/store.hpp"

namespace tunekit::stack {

// |got - expected| <= abs + rel * |expected| on at most max_readback_elements output elements
// (a strided sample of them when the outputs are larger); NaN never passes.
struct Tolerance {
  double abs = 1e-6;
  double rel = 1e-5;
  std::size_t max_readback_elements = 4096;
};

// The data one execution works on: inputs, the outputs it writes. The caller's live request
// is one; the controller makes a fresh one per trial (Problem::make_workspace), so no trial
// sees another's state.
class Workspace {
 public:
  virtual ~Workspace() = default;
  // Host views of the outputs, in a fixed order (what validation compares).
  virtual std::vector<OutputView> outputs() = 0;
  // The elements at `positions` (indices into the outputs laid end to end, ascending) as
  // doubles. The default reads outputs(); a device-resident workspace overrides it to copy
  // back only these elements (validation never asks for more than the tolerance's bound).
  virtual std::vector<double> read(std::span<const std::uint64_t> positions);
  // Total elements over outputs().
  virtual std::uint64_t output_elements();
  // Fills the outputs before a trial runs (outside its timing), so a candidate that skips an
  // element cannot pass validation. The default poisons outputs() (tunekit::poison: NaN,
  // or 0xA5 bytes for integers); a device-resident workspace overrides it.
  virtual void poison();
};

struct Problem {
  Scope scope = Scope::operator_;
  std::string name;  // e.g. "attention_block"
  Key signature;     // exact: every field is compared, no bucketing
  Tolerance tolerance;
  // A fresh workspace for one trial (inputs made, outputs allocated).
  std::function<std::unique_ptr<Workspace>()> make_workspace;
  // The lower-scope decisions this problem's candidates run under, as they stand now (for a
  // decision of this controller: StackController::dependency). A decision measured under
  // other ones is invalidated and re-decided.
  std::vector<Dependency> depends_on;

  // Canonical, length-delimited encoding of scope, name and signature (Key's encoding).
  std::string encode() const;
  // XXH3-128 of encode(): a fast, non-cryptographic content fingerprint (not a defence
  // against crafted collisions).
  Digest workload_digest() const;
};

struct StackCandidate {
  std::string name;               // stable identity: name + version
  int version = 1;                // bump when the implementation changes (a new cache key)
  std::size_t scratch_bytes = 0;  // over the controller's limit: rejected, never run
  // Declines a problem by returning a reason (that is a rejection, not a failure). Empty:
  // serves every problem. The reference's is never asked.
  std::function<std::optional<std::string>(const Problem&)> eligible;
  // Does the work on `ws` with `scratch` (scratch_bytes, fresh per trial and per execution).
  std::function<void(Workspace& ws, std::span<std::byte> scratch)> run;
  // Waits for work run() only submitted (a device queue). Empty: run() returns when done.
  std::function<void()> sync;
};

// Adapts a typed run function: run_on<MyWorkspace>([](MyWorkspace& w, std::span<std::byte>) …).
// A workspace of another type is a UsageError.
template <class W, class F>
std::function<void(Workspace&, std::span<std::byte>)> run_on(F f) {
  return [f = std::move(f)](Workspace& ws, std::span<std::byte> scratch) {
    auto* typed = dynamic_cast<W*>(&ws);
    if (!typed) throw UsageError("stack candidate: the workspace is not of the type run_on names");
    f(*typed, scratch);
  };
}

struct CandidateSet {
  std::vector<StackCandidate> candidates;
  std::optional<std::size_t> reference;  // mandatory: the index of the reference candidate
  // Digest of the ordered manifest (each name and version) and the reference's identity.
  Digest checksum() const;
};

// Identifies a decision: workload signature, ordered candidate manifest, the reference and
// the numerical policy (tolerance). Any change is a different decision.
Digest cache_key(const Problem& problem, const CandidateSet& set);

// One trial's result: seconds, or a classified failure.
struct TrialResult {
  double seconds = 0;
  std::optional<Failure> failure;
  std::unique_ptr<Workspace> workspace;  // what it ran on (validation reads its outputs)
  bool ok() const { return !failure.has_value(); }
};

// How one trial is run and timed: isolated state (a fresh workspace, poisoned with
// Workspace::poison outside the timing, and fresh scratch per trial), and seconds that cover
// all of the candidate's work: run() and then sync(). A timestamp taken when work was only
// submitted is not a measurement.
class TrialRunner {
 public:
  virtual ~TrialRunner() = default;
  // A candidate's exception is a Failure (FatalError propagates).
  virtual TrialResult run(const Problem& problem, const StackCandidate& candidate) = 0;
};

// Steady clock around run() + sync() on a fresh workspace and fresh scratch.
std::unique_ptr<TrialRunner> host_trial_runner();

enum class Mode {
  explore,     // tune on a miss
  cache_only,  // serve known decisions (a stored one validated once), never tune; a miss
               // gets the reference
  disabled,    // always the reference
};

struct ScorePolicy {
  int samples = 10;  // A B B A pairs per candidate; fewer positive finite pairs: no score
  double max_relative_mad = 0.10;  // a noisier score is no score
  // A candidate is selected only when its ratio is at most 1 - tie_band and the ratio's 95 %
  // upper bound is under 1: ties go to the reference.
  double tie_band = 0.02;
};

struct StackOptions {
  Mode mode = Mode::explore;
  ScorePolicy policy;
  std::size_t scratch_limit = std::size_t{1} << 30;
  std::size_t report_entries = 32;      // entries per StackReport
  std::size_t reports = 256;            // workloads whose report is kept (oldest dropped)
  std::shared_ptr<TrialRunner> runner;  // empty: host_trial_runner()
  // Persistence, optional: a decision measured in explore mode is stored in the same store as
  // kernel choices, under stack_identity(); a later process validates it once against the
  // reference and serves it (source `stored`). Bans are stored too. Without a known device in
  // `identity` decisions stay in this process's memory.
  std::shared_ptr<Store> store;
  Identity identity;  // the device, toolchain and environment parts of stored identities
  // A store that fails (a write, a ban, a read) is reported here and the decision stays in
  // memory; the caller's own result or error is unchanged. Empty: dropped.
  Log log;
};

// The stored identity of a decision: `base`'s device, toolchain and environment; op = the
// problem's name, key = its signature, scope = its scope; `candidates` a digest of the
// candidate-set checksum, the tolerance and the dependencies (a decision measured under other
// lower-scope decisions is another entry).
Identity stack_identity(const Identity& base, const Problem& problem, const CandidateSet& set);

// What select / try_execute returned.
struct Selection {
  std::size_t index = 0;  // into CandidateSet::candidates
  std::string candidate;
  DecisionSource source = DecisionSource::tuned;
  bool reference = true;  // the reference was returned
};

// The controller. Thread-safe; holds no lock while a candidate, a validation or a trial
// runs. A caller asking for a problem another thread is tuning gets the reference at once
// (contender), as does a request made from inside a trial (nested).
class StackController {
 public:
  explicit StackController(StackOptions options = {});
  ~StackController();
  StackController(const StackController&) = delete;
  StackController& operator=(const StackController&) = delete;

  // The candidate to use (tuning first on a miss in explore mode). Missing metadata (no or an
  // out-of-range reference, an empty name or signature, a candidate without a run function,
  // no make_workspace, duplicate names) is a UsageError before anything runs.
  Selection select(const Problem& problem, const CandidateSet& set);
  // select, then `request` executed once on the selection. When a candidate other than the
  // reference throws, its decision is invalidated, it is banned for this problem and the
  // exception propagates unchanged: the request is never re-run on another candidate.
  Selection try_execute(const Problem& problem, const CandidateSet& set, Workspace& request);

  // A measurement, not a decision: `contender` validated against `incumbent` (the
  // reference of the comparison) and scored by the paired score under the options' policy,
  // on the options' runner, exactly as select() measures an alternative. Nothing is recorded,
  // stored or counted. The contender's report entry: scored (or selected, when it beats the
  // incumbent beyond the tie band), no_score, failed or rejected, with its ratio. Costs
  // 2 + 2 * policy.samples trials (the incumbent's own, the validation, the pairs).
  ReportEntry compare(const Problem& problem, const StackCandidate& incumbent,
                      const StackCandidate& contender) const;

  // Drops the decision (and what depended on it). True when there was one.
  bool invalidate(const Problem& problem, const CandidateSet& set);
  // The current decision of a problem as a dependency of a higher one; undecided, the
  // reference (what serves then).
  Dependency dependency(const Problem& problem, const CandidateSet& set) const;
  // The names banned for this problem.
  std::vector<std::string> banned(const Problem& problem, const CandidateSet& set) const;

  Stats stats() const;
  // The report of the latest tune of this workload, if kept.
  std::optional<StackReport> report(const Problem& problem, const CandidateSet& set) const;
  std::vector<StackReport> reports() const;  // every kept report, oldest first
  const StackOptions& options() const;

  // Whether the calling thread is inside a trial (of any controller).
  static bool is_tuning();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process-wide opt-in controller: installed by the first call, with no I/O and no
// environment change. A second call is a UsageError (the first one's options stand; use
// stack_autotuner()).
StackController& enable_stack_autotune(StackOptions options = {});
// The installed controller, or nullptr when none was installed (creates nothing).
StackController* stack_autotuner();

// Uninstalls the process-wide controller. For tests only: not safe while it is in use.
void reset_stack_autotune_for_testing();

}  // namespace tunekit::stack
