// TunerOptions: what a Tuner decides with, measures with, keeps choices in, and calls back
// (DESIGN §7). Plain data; Tuner checks every field when it is constructed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cost_model.hpp"
#include "tunekit/identity.hpp"
#include "tunekit/log.hpp"
#include "tunekit/registry.hpp"
#include "tunekit/report.hpp"
#include "tunekit/stats.hpp"
#include "tunekit/store.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/timing.hpp"

namespace tunekit {

enum class Mode {
  off,     // always the default
  cached,  // serve what is known, never measure
  tune,    // search on a miss
  force,   // search even when a stored choice exists
};
std::string_view to_string(Mode mode);
// "off" | "cached" | "tune" | "force"; anything else is a UsageError listing them.
Mode mode_from_string(std::string_view text);

struct ProgressEvent {
  std::string_view op;
  std::size_t position = 0;  // 0-based among the candidates of this search
  std::size_t total = 0;
  std::string_view candidate;
  const CandidateReport* result = nullptr;  // set once the candidate is finished
};

struct IsolationOptions {
  enum class Mode { automatic, worker, in_process };
  Mode mode = Mode::automatic;
  // The time limit of one phase of a trial (validation, a timing window) while no incumbent
  // is known; once one is, the limit is ten times the window a candidate as fast as the
  // incumbent would take, at least `floor_seconds`, and never past the budget.
  double limit_seconds = 60;
  double floor_seconds = 2;
  // Address space a worker may allocate beyond what it inherits (0: the device's memory; for
  // a spawned worker, beyond what it has once set up, and 0: no limit).
  std::uint64_t memory_bytes = 0;
  // The program a device that cannot fork its context (Device::Workers::spawned: OpenCL,
  // CUDA) starts as a worker: a path (never looked up in PATH), run as `PROGRAM trial-worker
  // --fd 3`, serving trials with serve_trial_worker (tunekit/trial_worker.hpp). The `tunekit`
  // executable is one; the CLI sets its own path. from_environment(): TUNEKIT_WORKER_PROGRAM.
  std::string worker_program;
};
std::string_view to_string(IsolationOptions::Mode mode);
std::optional<IsolationOptions::Mode> isolation_mode_from_string(std::string_view name);

// Shared searches (docs/fleet.md "Shared searches"): with a server store, a search's points
// are queued as work items that `tunekit worker` processes with the same hardware identity
// evaluate (this process takes items too); the best points workers measured are measured
// again here before the decision, so the pick is never ranked across machines' clocks.
struct ShareOptions {
  bool enabled = false;  // from_environment(): TUNEKIT_SHARE=1
  // Worker-measured points re-measured here (the best by their readings); the others stay in
  // the report as evidence (status hopeless, the worker's reading in the message).
  std::size_t remeasure_top = 3;
  double item_ttl_seconds = 30;  // a worker's lease on an item; past it the item is leased again
  int max_attempts = 3;          // leases of one item before it is recorded as crashed
  double poll_seconds = 0.05;    // how often finished items are collected
};

// How a Tuner decides: which mode, which search, how wide a tie, within what budget.
struct DecideOptions {
  Mode mode = Mode::tune;
  double tie_band = 0.02;  // candidates within 2 % of the best are tied
  Statistic statistic = Statistic::median;
  Numerics numerics_policy = Numerics::reassociates;  // the most permissive class admitted
  // The search (DESIGN §6): a strategy proposes points of the op's candidate space, a
  // schedule shares timing windows among them. Strategies (StrategyRegistry::builtin()):
  // auto (the default), exhaustive, random, anneal, genetic, ils, bayes, bandit, model, with
  // options after a colon ("genetic:pop=20", "model:top=4,floor=1.5"). Schedules: "full" (one full
  // window each; a point that can no longer come within timing.hopeless_ratio of the best so far is
  // cut) or "racing" (round-robin windows, confidence intervals, losers dropped early;
  // "racing:round=4,z=1.96,min_samples=8,max_samples=64").
  std::string strategy = std::string(kDefaultStrategy);
  std::string schedule = "full";
  std::uint64_t seed = 1;  // the strategy's seed, recorded in reports and stored evidence
  // Budgets (DESIGN §7); 0: none. An attempt starts only while the elapsed time plus two
  // projected builds (its own and a reserve for the winner's rebuild) fits; the default is
  // always measured. A cut search is stored with budget_cut.
  double budget_seconds = 0;
  std::size_t budget_evaluations = 0;  // points measured beyond the default
  // Short-circuit for racing: stop as soon as the leader's upper bound is at or under this
  // many seconds per launch (0: off).
  double limit = 0;
  // Paired confirmation: a non-default winner must beat the default in A B B A pairs by more
  // than the tie band, else the default stands. `confirm_pairs` is the most pairs (0: off);
  // how many run is sized by the gap the main windows measured, in units of their noise
  // (paired.min_pairs + 2 when the gap is many MADs, more near the band), and pairs past
  // that floor only while they fit in `confirm_share` of the search's time so far — one share
  // for all the decision's pairings (the tie order's, the library's, the default's) — (0: no
  // cap). docs/guide.md "How a search decides", step 6.
  int confirm_pairs = 16;
  double confirm_share = 0.25;
  // The final race (docs/guide.md "How a search decides", step 4): once the strategy ends,
  // the `finalists` best readings within `finalist_band` of the best are timed again in
  // racing's round-robin windows, and the decision is taken on those fresh readings only. The
  // search's best readings are the luckiest of many windows, taken minutes apart on a machine
  // whose speed drifts; interleaved windows give every finalist the same minutes. Skipped
  // when the finalists were raced together already (one racing batch). 0: off; else >= 2.
  int finalists = 8;
  double finalist_band = 0.25;
  stats::PairedPolicy paired;
  ShareOptions share;
};

// Waiting for the host to run the CPUs near each other again (docs/guide.md "Where the host
// runs the CPUs"). A VM's vCPUs can be run on cores that share a cache or on cores that do not,
// and a host moves them while one idles; candidates whose threads share data run up to 2x
// slower apart. Like a co-runner's stall, that is interference: during a search the device's
// cross-CPU round trip is read before a window at most every `check_seconds`, and a reading
// over `far_ratio` times the lowest of the search waits (the CPUs idle, `poll_seconds` at a
// time, reading again) until the CPUs are near again, at most `wait_seconds` over the whole
// search. A device that cannot tell (Device::cross_cpu_round_trip) is never waited for.
// Off by default: on the 2-vCPU VM it was measured on, it did not make decisions more stable
// and cost time (docs/performance.md "Waiting for the CPUs to be near again").
struct PlacementWait {
  double wait_seconds = 0;      // the most one search waits in all (0: off; e.g. 2)
  double check_seconds = 0.02;  // seconds of the search between two readings
  double far_ratio = 2.0;       // a reading over this times the search's lowest is "far"
  double poll_seconds = 0.002;  // idle this long between two readings while waiting
  // How a wait idles. Empty: this thread sleeps. Tests give their scripted clock's.
  std::function<void(double)> sleep;
};

// How a Tuner measures: the timing protocol, the cache, the checks, the isolation, the clock.
struct MeasureOptions {
  TimingOptions timing;  // stop/on_call/evictor honoured
  PlacementWait placement;
  bool evict = false;  // flush the last-level cache before each sample (or per op: Op::evict)
  int rotate = 0;      // input copies cycled while timing (0: what the op declares)
  // Validation that holds (DESIGN §1.3): besides the validation run on the op's first input
  // set, a candidate that could win is checked by this many calls after a timing window, on
  // the inputs its launches left, and validated on the op's further input sets, so a result
  // that is wrong on some calls or values only, or a candidate that clobbers its inputs, fails
  // validation (with 0, or check_every_candidate, every candidate is validated on every set
  // at admission). "Could win": its fastest reading in
  // the window is within the tie band of the best checked reading so far (racing: the leader
  // of each round, after a short window of its own); a winner not yet
  // checked is checked before the decision stands (a failure there declines it and the next
  // is decided). 0: none (an op that works in place).
  int check_calls = 5;
  // Check every candidate after its first window, not only those that could win (a kernel
  // author's audit of a whole space: every wrong candidate named, at five calls each).
  bool check_every_candidate = false;
  // Threads of the compile pass (0: the hardware's).
  int build_threads = 0;
  // Isolated trials (DESIGN §11): a candidate's validation and timing run in a forked worker
  // process, so a crash, a hang or an allocation over the limit is a classified decline
  // (crashed, timed_out, out_of_memory) and the host survives. `automatic`: on where the
  // device isolates by default (the CPU device) unless the op opted out (Op::in_process);
  // `worker`: on (a UsageError where the device cannot); `in_process`: off.
  IsolationOptions isolation;
  // The budget clock in seconds (monotonic). Empty: std::chrono::steady_clock. Tests and the
  // replay device give their own.
  std::function<double()> now;
};

// Where a Tuner keeps choices, finds artifacts, records misses and takes device locks.
struct PersistOptions {
  // Persistent store: "none" keeps choices in memory only (the default of a plain
  // TunerOptions{}); "sqlite:PATH" opens that file, "postgresql://..." a server (docs/fleet.md).
  // from_environment() takes TUNEKIT_STORE, else the SQLite file under $TUNEKIT_CACHE_DIR
  // (else $XDG_CACHE_HOME/tunekit, else ~/.cache/tunekit).
  std::string store = "none";
  // How the store file is opened: how long a locked store is waited for (reads 2 s, writes
  // 5 s), whether a store others can write or another user owns is trusted (no). From
  // from_environment(): TUNEKIT_STORE_WAIT_MS, TUNEKIT_TRUST_STORE.
  StoreOptions store_options;
  // Deployable artifacts are looked up here after the store ("" = none).
  std::string artifact_dir;
  // Pending misses (DESIGN §7): in mode cached every miss is recorded in the store's pending
  // table (op, key, identity, a count) for `tunekit tune --pending` to tune later; with this
  // set, mode tune records too each key its search leaves without a stored choice (another
  // search held the device, nothing measured cleanly).
  bool record_misses = false;
  // Application tags that are part of every stored choice's identity.
  EnvironmentTags environment;
  // One search at a time per device (DESIGN §11). In a process, searches on one Device take
  // turns: a contender is served the default at once. Across processes, a search holds an
  // advisory lock (flock) on <lock_dir>/<device digest>.lock, which the kernel drops when the
  // holder dies. "" (the default): the "locks" directory beside a sqlite store, none for a
  // memory-only store; "none": in-process turns only. from_environment(): "locks" in the cache
  // directory, whatever the store.
  std::string lock_dir;
  // While another process searches on this device: 0 (the default) serves the default at
  // once; > 0 waits up to this many seconds for its lock, then reads the store again, so a
  // key the other process just tuned is served from there instead of searched twice.
  double wait_for_device_seconds = 0;
  // Tuning leases (docs/fleet.md): with a store, a search first takes the lease of its
  // identity in the store, renews it every third of `lease_ttl_seconds` while it runs and
  // releases it once the choice is stored. Another process (on any machine sharing the store)
  // that misses the identity meanwhile is served the default, or with wait_for_device_seconds
  // > 0 waits that long for the stored choice (or the lease) and serves it. A holder killed
  // without releasing loses its lease `lease_ttl_seconds` after its last renewal.
  // from_environment(): TUNEKIT_LEASE_TTL (seconds, 1..86400). 0: no leases.
  double lease_ttl_seconds = 30;
  // The name this Tuner's leases carry ("": lease_holder_name, host:pid:start:n, unique per
  // process and Tuner). A busy lease whose holder names a process of this host that is gone
  // (lease_holder_is_gone) is taken over at once; any other waits out its TTL. A name given
  // here must be unique across everything sharing the store.
  std::string lease_holder;
};

// The cost model (DESIGN §9): the envelope model_default, explain and model-guided searches
// rank with. Taken from `envelope` when set, else read from the `profile` file (a malformed
// or missing file is a UsageError), else from `profile_dir`/<device digest>.json when that
// file exists. None: the model declines and the default stands.
struct ModelOptions {
  std::optional<Envelope> envelope;
  std::string profile;
  std::string profile_dir;  // from_environment(): "profiles" beside the store file
  // The `model` link of the chain (memory -> store -> artifact -> model -> search | default):
  // a miss the store and the artifact cannot answer is served the model's pick (validated once,
  // never timed, never stored; Source::model) instead of the untuned default. Mode cached: the
  // answer (the miss is still recorded as pending). Modes tune and force: the answer callers get
  // while another caller's search of the key runs; the search still runs. Where the model
  // declines (no envelope, no work model) the default stands, as without it.
  bool serve = false;
};

// What a Tuner calls back.
struct TunerHooks {
  std::function<void(const ProgressEvent&)> on_progress;
  // Advisory build (DESIGN §7), in Tuner::run and Deferred::build: a chosen candidate failed
  // to build, so the default is built and run instead: the candidate's name and the cause.
  std::function<void(std::string_view candidate, const Outcome& cause)> on_fallback;
  // Which classified build failures fall back to the default (empty: every one).
  std::function<bool(const Outcome& cause)> fallback_if;
  // A build failure that is not recovered (fallback_if said no, or the default failed too),
  // just before it propagates.
  std::function<void(std::string_view candidate, const Outcome& cause)> on_unrecovered;
  // Called with every contended window before it is retried.
  std::function<void(std::string_view candidate, const TimingResult& contended)> on_retry;
  // Messages: warnings (an unusable store file, a skipped artifact), info (what was searched,
  // stored, served), debug (each candidate's outcome, each cut). Empty: dropped.
  // from_environment() logs to stderr at TUNEKIT_LOG's level (default warn).
  Log log;
};

// Grouped so that each part can be passed alone to the code that needs only it.
struct TunerOptions {
  DecideOptions decide;
  MeasureOptions measure;
  PersistOptions persist;
  ModelOptions model;
  TunerHooks hooks;
  // Reads TUNEKIT_MODE, TUNEKIT_CACHE_DIR, TUNEKIT_ARTIFACT_DIR, TUNEKIT_STORE_WAIT_MS,
  // TUNEKIT_TRUST_STORE, TUNEKIT_MODEL_SERVE (1: model.serve) and TUNEKIT_LOG (hooks.log's
  // level) once through getenv (a parameter, so tests pass their own).
  static TunerOptions from_environment(const std::function<const char*(const char*)>& getenv);
  static TunerOptions from_environment();
};

// The schedules DecideOptions::schedule may name (the strategies: StrategyRegistry::builtin()).
std::vector<PluginDescription> builtin_schedules();

}  // namespace tunekit
