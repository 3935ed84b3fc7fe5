#include "tunekit/tuner.hpp"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

#include "report/evidence_reader.hpp"
#include "store/stored_choice.hpp"
#include "tunekit/artifact.hpp"
#include "tunekit/errors.hpp"
#include "tuner/choice_table.hpp"
#include "tuner/device_lock.hpp"
#include "tuner/device_turn.hpp"
#include "tuner/model_choice.hpp"
#include "tuner/search.hpp"
#include "tuner/tuner_options.hpp"

namespace tunekit {

std::string_view to_string(Source source) {
  switch (source) {
    case Source::searched:
      return "searched";
    case Source::memory_hit:
      return "memory_hit";
    case Source::cache_replay:
      return "cache_replay";
    case Source::artifact_replay:
      return "artifact_replay";
    case Source::use_default:
      return "default";
    case Source::search_disabled:
      return "search_disabled";
    case Source::pre_search_failure:
      return "pre_search_failure";
    case Source::model:
      return "model";
    case Source::budget_floor_unmeasured:
      return "budget_floor_unmeasured";
  }
  return "unknown";
}

std::string_view to_string(Statistic statistic) {
  return statistic == Statistic::min ? "min" : "median";
}

namespace {
// Depth of searches running on this thread: a request made from inside a trial (a
// candidate calling back into tunekit) gets the default instead of starting a search.
thread_local int searches_on_this_thread = 0;

struct PendingKey {
  Digest op;
  Digest key;
  friend auto operator<=>(const PendingKey& a, const PendingKey& b) {
    return std::tie(a.op.high, a.op.low, a.key.high, a.key.low) <=>
           std::tie(b.op.high, b.op.low, b.key.high, b.key.low);
  }
};
}  // namespace

class Tuner::Impl {
 public:
  Impl(Device& device, TunerOptions options) : device_(device), options_(std::move(options)) {
    detail::check_tuner_options(options_);   // every numeric field: NaN, negative, absurd
    detail::check_search_options(options_);  // an unknown strategy fails here, not mid-call
    if (!(std::isfinite(options_.wait_for_device_seconds) && options_.wait_for_device_seconds >= 0))
      throw UsageError(
          "TunerOptions: wait_for_device_seconds must be a finite number of seconds >= 0 (0: "
          "serve the default while another process searches on the device)");
    store_ = open_store(options_.store, options_.on_warning, options_.store_options);
    environment_ = options_.environment;
    // A profile named explicitly fails here (missing, malformed), not at the first call.
    if (options_.envelope || !options_.profile.empty()) envelope_source();
  }

  // Resolved once: the explicit envelope or profile, else this device's stored profile.
  const detail::EnvelopeSource& envelope_source() const {
    std::call_once(envelope_once_,
                   [&] { envelope_ = detail::resolve_envelope(options_, device_.identity()); });
    return envelope_;
  }

  ModelReport model_report(const OpBase& op, const Key& key,
                           const detail::EnvelopeSource& source) const {
    op.check_key(key);
    ModelReport r = detail::model_decide(op, key, source, options_);
    r.device = device_.identity().product;
    return r;
  }

  ModelReport explain(const OpBase& op, const Key& key) {
    ModelReport r = model_report(op, key, envelope_source());
    if (!store_ || !device_.identity().known) return r;
    auto stored = store_->find(identity(op, key).digest().hex());
    if (!stored) return r;
    r.measured_from = store_->describe();
    for (const CandidateReport& m : detail::candidates_from_json(stored->evidence)) {
      for (ModelCandidate& c : r.candidates) {
        if (c.name != m.name) continue;
        c.measured_status = std::string(to_string(m.outcome.status));
        if (m.outcome.ok() && m.score > 0) c.measured_seconds = m.score;
      }
    }
    return r;
  }

  void set_environment_tags(EnvironmentTags tags) {
    std::lock_guard lock(pending_mutex_);
    if (used_) {
      throw UsageError(
          "environment tags must be set before the tuner's first select or tune: choices "
          "already served were judged under the old tags; create a new Tuner instead");
    }
    environment_ = std::move(tags);
  }

  Identity identity(const OpBase& op, const Key& key) const {
    Identity id;
    id.device = device_.identity();
    id.toolchain = this_toolchain();
    if (!id.device.driver.empty()) id.toolchain.runtimes.push_back(id.device.driver);
    id.environment = environment_;
    id.numerics_policy = options_.numerics_policy;
    id.op = op.name();
    id.candidates = op.checksum();
    id.key = key;
    return id;
  }

  Store* store() { return store_.get(); }

  Choice select(const OpBase& op, const Key& key, TuneReport* report) {
    const Digest& op_digest = op.checksum();
    if (options_.mode != Mode::off) {
      if (auto hit = table_.find(op_digest, key.digest())) {
        if (report) *report = brief(op, key, *hit, Source::memory_hit, {});
        return {*hit, Source::memory_hit};
      }
    }
    return miss(op, key, report, /*force=*/false);
  }

  TuneReport tune(const OpBase& op, const Key& key) {
    TuneReport report;
    miss(op, key, &report, /*force=*/true);
    return report;
  }

  const TunerOptions& options() const { return options_; }
  Device& device() { return device_; }

 private:
  Choice miss(const OpBase& op, const Key& key, TuneReport* report, bool force) {
    op.check_key(key);
    const std::size_t fallback = op.default_index(key);
    auto serve_default = [&](Source source, std::string reason) {
      if (report) *report = brief(op, key, fallback, source, std::move(reason));
      return Choice{fallback, source};
    };
    if (!force && options_.mode == Mode::off)
      return serve_default(Source::use_default, "mode is off");
    if (searches_on_this_thread > 0)
      return serve_default(Source::use_default, "nested request from inside a search");

    PendingKey pending{op.checksum(), key.digest()};
    {
      std::lock_guard lock(pending_mutex_);
      used_ = true;
      if (!force) {
        if (auto hit = table_.find(pending.op, pending.key)) {
          if (report) *report = brief(op, key, *hit, Source::memory_hit, {});
          return {*hit, Source::memory_hit};
        }
      }
      if (!pending_.insert(pending).second)
        return serve_default(Source::use_default, "another caller is tuning this key");
    }
    // Unmarks the key and the thread however the search ends (an exception included).
    struct Unmark {
      Impl& self;
      PendingKey key;
      ~Unmark() {
        --searches_on_this_thread;
        std::lock_guard lock(self.pending_mutex_);
        self.pending_.erase(key);
      }
    };
    ++searches_on_this_thread;
    Unmark unmark{*this, pending};

    const Identity id = identity(op, key);
    const bool reuse = !force && options_.mode != Mode::force;
    if (reuse) {
      if (auto known = from_store(op, key, id, report)) return *known;
      if (auto known = from_artifact(op, key, report)) return *known;
    }
    if (!force && options_.mode == Mode::cached)
      return serve_default(Source::search_disabled, "mode is cached and no choice is known");

    // One search at a time per device, held until the winner is stored (DESIGN §11).
    detail::DeviceTurn turn(device_, lock_path(), options_.wait_for_device_seconds);
    if (!turn.warning().empty() && options_.on_warning && !lock_warned_.exchange(true))
      options_.on_warning(turn.warning());
    if (!turn.granted()) return serve_default(Source::use_default, turn.refusal());
    // The process we waited for may have tuned this very key.
    if (reuse && turn.waited()) {
      if (auto known = from_store(op, key, id, report)) return *known;
    }
    return search(op, key, id, report);
  }

  // A stored choice for (op, key), published to the table; nullopt when the store has none.
  std::optional<Choice> from_store(const OpBase& op, const Key& key, const Identity& id,
                                   TuneReport* report) {
    if (!store_ || !device_.identity().known) return std::nullopt;
    // A partial entry (a budget cut, a pruning strategy) serves a search that is restricted
    // too; a search without those limits replaces it (DESIGN §7).
    auto stored = store_->find(id.digest().hex());
    if (stored && stored->budget_cut && !detail::search_is_restricted(options_, op)) stored.reset();
    if (!stored) return std::nullopt;
    auto index = op.find(stored->winner);
    if (!index) return std::nullopt;
    table_.publish(op.checksum(), key.digest(), *index);
    if (report) {
      *report = brief(op, key, *index, Source::cache_replay, "from " + store_->describe());
      detail::fill_from_evidence(*report, stored->evidence);
    }
    return Choice{*index, Source::cache_replay};
  }

  // A deployable artifact's choice for (op, key), published to the table.
  std::optional<Choice> from_artifact(const OpBase& op, const Key& key, TuneReport* report) {
    if (options_.artifact_dir.empty()) return std::nullopt;
    auto index = find_artifact_choice(options_.artifact_dir, op, key, device_.identity(),
                                      options_.on_warning);
    if (!index) return std::nullopt;
    table_.publish(op.checksum(), key.digest(), *index);
    if (report)
      *report = brief(op, key, *index, Source::artifact_replay, "from " + options_.artifact_dir);
    return Choice{*index, Source::artifact_replay};
  }

  // The cross-process lock file of this device ("": in-process turns only), see
  // TunerOptions::lock_dir.
  std::string lock_path() const {
    std::string dir = options_.lock_dir;
    if (dir == "none") return "";
    if (dir.empty()) {
      constexpr std::string_view sqlite = "sqlite:";
      if (options_.store.rfind(sqlite, 0) != 0) return "";
      dir = (std::filesystem::path(options_.store.substr(sqlite.size())).parent_path() / "locks")
                .string();
    }
    return detail::DeviceLock::path_for(dir, device_.identity());
  }

  // Searches (this caller holds the key and the device), publishes and keeps the winner.
  Choice search(const OpBase& op, const Key& key, const Identity& id, TuneReport* report) {
    TuneReport r = detail::run_search(device_, op, key, options_, prior(op, key));
    fill_identity(r, op, key);
    table_.publish(op.checksum(), key.digest(), r.winner);
    const CandidateReport* winner = r.find(r.winner);
    const bool measured = r.source == Source::searched && winner && winner->outcome.ok();
    if (!measured) {
      r.reason += std::string(r.reason.empty() ? "" : "; ") +
                  "no clean measurement: kept in memory for this session only";
    } else if (!device_.identity().known) {
      r.reason += std::string(r.reason.empty() ? "" : "; ") +
                  "device identity unknown: kept in memory for this session only";
    } else if (store_) {
      store_->put(detail::make_stored_choice(id, r, op.candidate(r.winner).config.text(),
                                             /*budget_cut=*/r.budget.cut));
    }
    if (measured && device_.identity().known && options_.mode == Mode::force &&
        !options_.artifact_dir.empty()) {
      // Mode force refreshes the deployable artifact too.
      write_artifact(options_.artifact_dir,
                     make_artifact(op, key, device_.identity(), r.winner_name,
                                   detail::make_stored_choice(id, r, "", false).evidence));
    }
    Choice choice{r.winner, r.source};
    if (report) *report = std::move(r);
    return choice;
  }

  // What the search knows before its first evaluation: the cost model's view of every point,
  // when the op has a work model and an envelope is known.
  SearchPrior prior(const OpBase& op, const Key& key) const {
    SearchPrior p;
    if (!op.has_work_model() || !envelope_source().envelope) return p;
    const ModelReport m = detail::model_decide(op, key, envelope_source(), options_);
    if (m.source != Source::model) return p;
    p.model_seconds.assign(op.size(), std::numeric_limits<double>::quiet_NaN());
    p.model_rank.assign(op.size(), 0);
    for (const ModelCandidate& c : m.candidates) {
      if (c.index >= p.model_seconds.size()) continue;
      if (c.scored && c.admission.ok()) p.model_seconds[c.index] = c.time.seconds;
      p.model_rank[c.index] = c.rank;
    }
    p.floor_seconds = m.floor_seconds;
    return p;
  }

  void fill_identity(TuneReport& r, const OpBase& op, const Key& key) const {
    r.op = op.name();
    r.op_checksum = op.checksum().hex();
    r.key = key.text();
    r.key_digest = key.digest().hex();
    r.device = device_.identity().product;
    r.statistic = options_.statistic;
    r.tie_band = options_.tie_band;
    r.numerics_policy = options_.numerics_policy;
  }

  TuneReport brief(const OpBase& op, const Key& key, std::size_t index, Source source,
                   std::string reason) const {
    TuneReport r;
    fill_identity(r, op, key);
    r.source = source;
    r.reason = std::move(reason);
    r.winner = index;
    r.winner_name = op.candidate(index).name;
    r.default_index = op.default_index(key);
    r.default_name = op.candidate(r.default_index).name;
    r.space_size = op.size();
    return r;
  }

  Device& device_;
  TunerOptions options_;
  detail::ChoiceTable table_;
  std::mutex pending_mutex_;
  std::set<PendingKey> pending_;
  bool used_ = false;                     // guarded by pending_mutex_
  std::atomic<bool> lock_warned_{false};  // an unusable device lock is reported once
  EnvironmentTags environment_;
  std::unique_ptr<Store> store_;
  mutable std::once_flag envelope_once_;
  mutable detail::EnvelopeSource envelope_;
};

Tuner::Tuner(Device& device, TunerOptions options)
    : impl_(std::make_unique<Impl>(device, std::move(options))) {}
Tuner::~Tuner() = default;

Choice Tuner::select(const OpBase& op, const Key& key, TuneReport* report) {
  return impl_->select(op, key, report);
}
TuneReport Tuner::tune(const OpBase& op, const Key& key) {
  return impl_->tune(op, key);
}
const TunerOptions& Tuner::options() const {
  return impl_->options();
}
Device& Tuner::device() {
  return impl_->device();
}

Choice Tuner::model_default(const OpBase& op, const Key& key, ModelReport* report) {
  ModelReport r = impl_->model_report(op, key, impl_->envelope_source());
  Choice choice{r.winner, r.source};
  if (report) *report = std::move(r);
  return choice;
}

Choice Tuner::model_choice(const OpBase& op, const Key& key, const Envelope& envelope,
                           ModelReport* report) const {
  ModelReport r = impl_->model_report(op, key, {envelope, "given"});
  Choice choice{r.winner, r.source};
  if (report) *report = std::move(r);
  return choice;
}

ModelReport Tuner::explain(const OpBase& op, const Key& key) {
  return impl_->explain(op, key);
}

std::optional<Envelope> Tuner::envelope(std::string* origin) const {
  const detail::EnvelopeSource& source = impl_->envelope_source();
  if (origin) *origin = source.origin;
  return source.envelope;
}

void Tuner::set_environment_tags(EnvironmentTags tags) {
  impl_->set_environment_tags(std::move(tags));
}
Identity Tuner::identity(const OpBase& op, const Key& key) const {
  return impl_->identity(op, key);
}
Store* Tuner::store() {
  return impl_->store();
}

}  // namespace tunekit
