// Tuner: serves a choice per (op, key) (DESIGN §7). select() on a hit is a lock-free table
// read; a miss searches (mode permitting) with single flight.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

#include "tunekit/candidate.hpp"
#include "tunekit/device.hpp"
#include "tunekit/identity.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/stats.hpp"
#include "tunekit/store.hpp"
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

struct TunerOptions {
  Mode mode = Mode::tune;
  double tie_band = 0.02;  // candidates within 2 % of the best are tied
  Statistic statistic = Statistic::median;
  Numerics numerics_policy = Numerics::reassociates;  // the most permissive class admitted
  TimingOptions timing;                               // stop/on_call/evictor honoured
  bool evict = false;  // flush the last-level cache before each sample (or per op: Op::evict)
  int rotate = 0;      // input copies cycled while timing (0: what the op declares)
  std::function<void(const ProgressEvent&)> on_progress;
  // Called with every contended window before it is retried.
  std::function<void(std::string_view candidate, const TimingResult& contended)> on_retry;

  // How a search measures: "exhaustive" (every admitted candidate, one full window each; a
  // candidate whose median can no longer come within timing.hopeless_ratio of the best so
  // far is cut) or "racing" (round-robin windows, confidence intervals, losers dropped
  // early). Options after a colon: "racing:round=4,z=1.96,min_samples=8".
  std::string search = "exhaustive";
  // Short-circuit for racing: stop as soon as the leader's upper bound is at or under this
  // many seconds per launch (0: off).
  double limit = 0;
  // Paired confirmation: a non-default winner must beat the default in `confirm_pairs`
  // A B B A pairs by more than the tie band, else the default stands. 0 pairs: off.
  int confirm_pairs = 16;
  stats::PairedPolicy paired;

  // Persistent store: "none" keeps choices in memory only (the default of a plain
  // TunerOptions{}); "sqlite:PATH" opens that file. from_environment() picks the SQLite file
  // under $TUNEKIT_CACHE_DIR (else $XDG_CACHE_HOME/tunekit, else ~/.cache/tunekit).
  std::string store = "none";
  // Deployable artifacts are looked up here after the store ("" = none).
  std::string artifact_dir;
  // Application tags that are part of every stored choice's identity.
  EnvironmentTags environment;
  // Warnings (an unusable store file, a skipped artifact). Empty: dropped.
  // from_environment() sends them to stderr.
  WarningSink on_warning;

  // Reads TUNEKIT_MODE, TUNEKIT_CACHE_DIR, TUNEKIT_ARTIFACT_DIR once through getenv (a
  // parameter, so tests pass their own).
  static TunerOptions from_environment(const std::function<const char*(const char*)>& getenv);
  static TunerOptions from_environment();
};

struct Choice {
  std::size_t index = 0;
  Source source = Source::use_default;
};

class Tuner {
 public:
  explicit Tuner(Device& device, TunerOptions options = {});
  ~Tuner();
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  // The hot path. A hit reads the in-memory table without taking a contended lock. A miss
  // follows the mode; while one caller tunes a key, concurrent and nested callers get the
  // default at once. Fills *report when given.
  Choice select(const OpBase& op, const Key& key, TuneReport* report = nullptr);

  // Looks up the choice and calls it on the caller's arguments.
  template <class Args>
  void run(const Op<Args>& op, Args& args) {
    op.call(select(op, op.key_of(args)).index, args);
  }

  // Searches now, whatever the mode and the table say, and publishes the winner.
  TuneReport tune(const OpBase& op, const Key& key);

  // Sets the environment tags; only before the first select/tune (UsageError afterwards,
  // since choices already served were judged under the old tags).
  void set_environment_tags(EnvironmentTags tags);
  // The identity a choice for (op, key) is stored under.
  Identity identity(const OpBase& op, const Key& key) const;
  // The persistent store in use, or nullptr when memory-only.
  Store* store();

  const TunerOptions& options() const;
  Device& device();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tunekit
