#include "tunekit/tuner.hpp"

#include <atomic>
#include <cmath>
#include <ctime>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"
#include "tuner/answer_log.hpp"
#include "tuner/artifact_source.hpp"
#include "tuner/default_source.hpp"
#include "tuner/memory_source.hpp"
#include "tuner/model_choice.hpp"
#include "tuner/model_source.hpp"
#include "tuner/revalidation.hpp"
#include "tuner/search.hpp"
#include "tuner/search_source.hpp"
#include "tuner/store_source.hpp"
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
    case Source::stale_replay:
      return "stale_replay";
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

// The advisory build of Tuner::run and Deferred::build, from the options' hooks.
AdvisoryBuild advisory_build(const TunerHooks& hooks) {
  return AdvisoryBuild{hooks.on_fallback, hooks.fallback_if, hooks.on_unrecovered};
}
}  // namespace

class Tuner::Impl {
 public:
  Impl(Device& device, TunerOptions options)
      : device_(device),
        options_(std::move(options)),
        memory_(device.identity(), options_),
        revalidator_(device, options_) {
    detail::check_tuner_options(options_);   // every numeric field: NaN, negative, absurd
    detail::check_search_options(options_);  // an unknown strategy fails here, not mid-call
    if (!(std::isfinite(options_.persist.wait_for_device_seconds) &&
          options_.persist.wait_for_device_seconds >= 0))
      throw UsageError(
          "TunerOptions: persist.wait_for_device_seconds must be a finite number of seconds >= 0 "
          "(0: "
          "serve the default while another process searches on the device)");
    store_ = open_store(options_.persist.store, options_.hooks.log.warning_sink(),
                        options_.persist.store_options);
    environment_ = options_.persist.environment;
    // A profile named explicitly fails here (missing, malformed), not at the first call.
    if (options_.model.envelope || !options_.model.profile.empty()) envelope_source();
    build_chains();
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
    if (op.buckets()) r.bucket = op.bucket_text(key);
    return r;
  }

  ModelReport explain(const OpBase& op, const Key& key) {
    ModelReport r = model_report(op, key, envelope_source());
    if (!store_ || !device_.identity().known) return r;
    auto stored = store_->find(identity(op, key).digest().hex());
    if (!stored) return r;
    r.measured_from = store_->describe();
    r.measured_winner = stored->winner;
    if (stored->search) {
      r.measured_confidence = stored->search->confidence;
      const FinalRace& race = stored->search->final_race;
      if (race.finalists > 0 || !race.note.empty()) r.measured_final_race = race;
      if (stored->search->cpu_placement.measured())
        r.measured_cpu_placement = stored->search->cpu_placement;
    }
    for (const CandidateReport& m : stored->evidence) {
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

  // The identity of a choice for (op, key): a bucketed op's is its bucket's.
  Identity identity(const OpBase& op, const Key& key) const {
    return identity_of(op, op.buckets() ? op.bucket_of(key) : key);
  }
  Identity identity_of(const OpBase& op, const Key& key) const {
    Identity id;
    id.device = device_.identity();
    id.toolchain = this_toolchain();
    if (!id.device.driver.empty()) id.toolchain.runtimes.push_back(id.device.driver);
    id.environment = environment_;
    id.numerics_policy = options_.decide.numerics_policy;
    id.op = op.name();
    id.candidates = op.checksum_for(key);  // what "correct" means at this key included
    id.key = key;
    return id;
  }

  Store* store() { return store_.get(); }

  Choice select(const OpBase& op, const Key& key, TuneReport* report) {
    if (options_.decide.mode != Mode::off) {
      if (auto hit = memory_.hit(op.checksum(), key.digest())) {
        if (report) *report = brief(op, key, *hit, Source::memory_hit, {});
        return {*hit, Source::memory_hit};
      }
    }
    return miss(op, key, report, /*search_now=*/false);
  }

  // Tuner::run's hot probe (a typed key's values); mode off serves the default, as select.
  std::optional<std::size_t> hot_hit(const OpBase& op, const Digest& values) const {
    if (options_.decide.mode == Mode::off) return std::nullopt;
    return memory_.hot_hit(op.checksum(), values);
  }

  std::optional<Choice> settled(const OpBase& op, const Key& key) const {
    if (options_.decide.mode == Mode::off) return std::nullopt;
    auto hit = memory_.hit(op.checksum(), key.digest());
    if (!hit) return std::nullopt;
    return Choice{*hit, Source::memory_hit};
  }

  TuneReport tune(const OpBase& op, const Key& key) {
    TuneReport report;
    miss(op, key, &report, /*search_now=*/true);
    return report;
  }

  bool live_failure(const OpBase& op, const Key& key, std::size_t index,
                    const std::exception_ptr& error);
  void keep_ban(const OpBase& op, const Key& stored, const std::string& name,
                const std::string& why);

  const TunerOptions& options() const { return options_; }
  Device& device() { return device_; }

 private:
  Choice miss(const OpBase& op, const Key& key, TuneReport* report, bool search_now);
  Choice serve_contender(const OpBase& op, const Key& key, TuneReport* report);
  Choice answer(const OpBase& op, const Key& stored, const Key& asked, bool search_now,
                TuneReport* report);
  bool banned_meanwhile(const detail::ServeRequest& request, const detail::Served& served) const;
  Choice answer_default(detail::ServeRequest& request, const Key& asked, TuneReport* report);
  void serve_in_bucket(const OpBase& op, const Key& asked, detail::Served& served, TuneReport& r);

  // The mode builds the chain (DESIGN §7); Tuner::tune always ends in a search.
  void build_chains() {
    Store* store = store_.get();
    const DeviceIdentity& device = device_.identity();
    store_source_ =
        std::make_unique<detail::StoreSource>(store, device, options_, revalidator_, bans_);
    artifact_source_ =
        std::make_unique<detail::ArtifactSource>(store, device, options_, revalidator_, bans_);
    search_source_ = std::make_unique<detail::SearchSource>(
        device_, options_, store, *store_source_, bans_,
        [this](const OpBase& op, const Key& key) { return prior(op, key); });
    default_source_ = std::make_unique<detail::DefaultSource>(store, device, options_);
    model_source_ = std::make_unique<detail::ModelSource>(
        store, device, options_,
        [this]() -> const detail::EnvelopeSource& { return envelope_source(); }, revalidator_,
        bans_, *default_source_);
    std::vector<detail::ChoiceSource*> replay{&memory_, store_source_.get(),
                                              artifact_source_.get()};
    tune_chain_ = replay;
    tune_chain_.push_back(search_source_.get());
    tune_chain_.push_back(default_source_.get());
    select_chain_ = replay;
    if (options_.decide.mode == Mode::cached && options_.model.serve)
      select_chain_.push_back(model_source_.get());
    if (options_.decide.mode != Mode::cached) select_chain_.push_back(search_source_.get());
    select_chain_.push_back(default_source_.get());
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

  TuneReport brief(const OpBase& op, const Key& key, std::size_t index, Source source,
                   std::string reason) const {
    return detail::brief_report(op, key, device_.identity(), options_, index, source,
                                std::move(reason));
  }

  Device& device_;
  TunerOptions options_;
  detail::MemorySource memory_;
  detail::Revalidator revalidator_;
  detail::LiveBans bans_;
  std::mutex pending_mutex_;
  std::set<PendingKey> pending_;
  // A bucketed op's sizes published from each bucket's choice, so a ban retracts them all.
  std::mutex bucket_mutex_;
  std::map<PendingKey, std::vector<Key>> bucket_sizes_;
  bool used_ = false;  // guarded by pending_mutex_
  EnvironmentTags environment_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<detail::StoreSource> store_source_;
  std::unique_ptr<detail::ArtifactSource> artifact_source_;
  std::unique_ptr<detail::SearchSource> search_source_;
  std::unique_ptr<detail::DefaultSource> default_source_;
  std::unique_ptr<detail::ModelSource> model_source_;
  std::vector<detail::ChoiceSource*> select_chain_;
  std::vector<detail::ChoiceSource*> tune_chain_;
  mutable std::once_flag envelope_once_;
  mutable detail::EnvelopeSource envelope_;
};

Choice Tuner::Impl::miss(const OpBase& op, const Key& key, TuneReport* report, bool search_now) {
  op.check_key(key);
  auto serve_default = [&](Source source, std::string reason) {
    const std::size_t fallback = op.default_index(key);
    if (report) *report = brief(op, key, fallback, source, std::move(reason));
    return Choice{fallback, source};
  };
  if (!search_now && options_.decide.mode == Mode::off)
    return serve_default(Source::use_default, "mode is off");
  if (searches_on_this_thread > 0)
    return serve_default(Source::use_default, "nested request from inside a search");
  if (op.size() == 1)  // nothing to choose between: no search, nothing stored
    return serve_default(Source::use_default, "one candidate: nothing to tune");

  // A bucketed op's choice is kept for its bucket (DESIGN §3): one search per bucket.
  const Key stored = op.buckets() ? op.bucket_of(key) : key;
  PendingKey pending{op.checksum(), stored.digest()};
  bool contender = false;
  {
    std::lock_guard lock(pending_mutex_);
    used_ = true;
    if (!search_now) {
      if (auto hit = memory_.hit(pending.op, key.digest())) {
        if (report) *report = brief(op, key, *hit, Source::memory_hit, {});
        return {*hit, Source::memory_hit};
      }
    }
    contender = !pending_.insert(pending).second;
  }
  if (contender) return serve_contender(op, key, report);  // outside the lock: it may validate
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
  return answer(op, stored, key, search_now, report);
}

// A caller that finds the key being searched gets the default at once, or the cost model's
// pick where ModelOptions::serve asks for it (DESIGN §7): nobody waits for a search.
Choice Tuner::Impl::serve_contender(const OpBase& op, const Key& key, TuneReport* report) {
  const std::optional<std::size_t> index =
      options_.model.serve ? model_source_->pick(op, key, identity(op, key).digest().hex())
                           : std::nullopt;
  if (index) {
    if (report)
      *report = brief(op, key, *index, Source::model,
                      "another caller is tuning this key: the cost model's pick meanwhile");
    return {*index, Source::model};
  }
  const std::size_t fallback = op.default_index(key);
  if (report)
    *report = brief(op, key, fallback, Source::use_default, "another caller is tuning this key");
  return {fallback, Source::use_default};
}

// The first source of the chain with an answer serves; the sources before it record the
// answer, from the last to the first (DESIGN §7). `stored` is what the choice is kept under
// (`asked`, or its bucket's representative).
Choice Tuner::Impl::answer(const OpBase& op, const Key& stored, const Key& asked, bool search_now,
                           TuneReport* report) {
  const Identity id = identity_of(op, stored);
  detail::ServeRequest request{op, stored, id};
  request.search_now = search_now;
  request.replay = !search_now && options_.decide.mode != Mode::force;
  const std::vector<detail::ChoiceSource*>& chain = search_now ? tune_chain_ : select_chain_;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    std::optional<detail::Served> served = chain[i]->find(request);
    if (!served) continue;
    if (banned_meanwhile(request, *served)) return answer_default(request, asked, report);
    for (std::size_t j = i; j-- > 0;) chain[j]->record(request, *served);
    TuneReport& r = request.report;
    r.stale = request.stale;
    if (!request.stale.empty() && served->source != Source::stale_replay)
      detail::add_reason(r, request.stale);
    if (!(stored == asked)) serve_in_bucket(op, asked, *served, r);
    detail::log_answer(options_.hooks.log, r);
    if (report) *report = std::move(r);
    return {served->index, served->source};
  }
  throw FatalError("the tuner's chain of sources gave no answer");  // the default always does
}

// A candidate banned (failed live) while this answer was searched for is neither kept nor
// served.
bool Tuner::Impl::banned_meanwhile(const detail::ServeRequest& request,
                                   const detail::Served& served) const {
  return served.index != request.op.default_index(request.key) &&
         bans_.banned(request.op.checksum(), request.key.digest(), served.index);
}

Choice Tuner::Impl::answer_default(detail::ServeRequest& request, const Key& asked,
                                   TuneReport* report) {
  const std::size_t fallback = request.op.default_index(asked);
  if (report)
    *report = brief(request.op, asked, fallback, Source::use_default,
                    "the chosen candidate failed live while it was chosen: nothing kept");
  return {fallback, Source::use_default};
}

// The bucket's choice serves a size of the bucket once it validates at that size; one that
// does not gets the default (for this size only, for the session).
void Tuner::Impl::serve_in_bucket(const OpBase& op, const Key& asked, detail::Served& served,
                                  TuneReport& r) {
  r.bucket = op.bucket_text(asked);
  const std::size_t fallback = op.default_index(asked);
  if (served.index != fallback) {
    if (auto checked = revalidator_.check(op, asked, served.index); checked && !checked->ok()) {
      r.stale = "the bucket's choice " + op.candidate(served.index).name +
                " failed validation at " + asked.text() + " (" +
                std::string(to_string(checked->status)) + ": " + checked->message +
                "): the default serves this size";
      detail::add_reason(r, r.stale);
      served.index = fallback;
      served.source = Source::stale_replay;
      r.source = Source::stale_replay;
      r.winner = fallback;
      r.winner_name = op.candidate(fallback).name;
    }
  }
  if (served.publish || served.source == Source::memory_hit) {
    memory_.publish(op, asked, served.index);
    std::lock_guard lock(bucket_mutex_);
    bucket_sizes_[PendingKey{op.checksum(), op.bucket_of(asked).digest()}].push_back(asked);
  }
}

// A live failure of the chosen candidate (DESIGN §7): the choice is retracted here and in the
// store, the candidate banned for the key; the error propagates, except a failed build of a
// chosen candidate, which is advisory: the caller runs the default instead (true).
bool Tuner::Impl::live_failure(const OpBase& op, const Key& key, std::size_t index,
                               const std::exception_ptr& error) {
  if (index == op.default_index(key)) return false;  // the default's own failure propagates
  Outcome cause;
  try {
    std::rethrow_exception(error);
  } catch (const FatalError&) {
    return false;  // the device, not the candidate
  } catch (const UsageError&) {
    return false;  // the caller's arguments, not the candidate
  } catch (...) {
    cause = detail::classify_exception(std::current_exception(), "a live call");
  }
  // Memory ran out: the machine's state, not the candidate's fault (nothing is banned).
  if (cause.status == Status::out_of_memory) return false;
  const std::string name = op.candidate(index).name;
  const std::string why =
      "failed live: " + std::string(to_string(cause.status)) + ": " + cause.message;
  // A bucketed op's choice is the bucket's: banned and retracted for the whole bucket.
  const Key stored = op.buckets() ? op.bucket_of(key) : key;
  bans_.ban(op.checksum(), stored.digest(), index, why);
  memory_.retract(op, key);
  if (!(stored == key)) {
    memory_.retract(op, stored);
    // Every size the bucket's choice was published for.
    std::lock_guard lock(bucket_mutex_);
    auto sizes = bucket_sizes_.find(PendingKey{op.checksum(), stored.digest()});
    if (sizes != bucket_sizes_.end()) {
      for (const Key& size : sizes->second) memory_.retract(op, size);
      bucket_sizes_.erase(sizes);
    }
  }
  keep_ban(op, stored, name, why);
  if (cause.status != Status::compile_failed) return false;
  return advisory_build(options_.hooks).recover(name, cause);
}

// The store's part of a live failure: the entry goes stale only if it still names the
// candidate (another process may have stored a new winner since), and the ban is kept. A store
// that fails here is warned about: the caller's own error is what propagates.
void Tuner::Impl::keep_ban(const OpBase& op, const Key& stored, const std::string& name,
                           const std::string& why) {
  if (!store_ || !device_.identity().known) return;
  try {
    const std::string digest = identity_of(op, stored).digest().hex();
    if (auto entry = store_->find(digest); entry && entry->winner == name)
      store_->mark_stale(digest, "its candidate " + name + " " + why);
    store_->ban(BannedCandidate{digest, op.name(), stored.text(), name, why,
                                static_cast<std::int64_t>(std::time(nullptr))});
  } catch (const std::exception& e) {
    options_.hooks.log.warn("the ban of " + name + " could not be stored: " + e.what());
  }
}

Tuner::Tuner(Device& device, TunerOptions options)
    : impl_(std::make_unique<Impl>(device, std::move(options))) {}
Tuner::~Tuner() = default;

Choice Tuner::select(const OpBase& op, const Key& key, TuneReport* report) {
  return impl_->select(op, key, report);
}
TuneReport Tuner::tune(const OpBase& op, const Key& key) {
  return impl_->tune(op, key);
}
Deferred Tuner::tune_deferred(const OpBase& op, const Key& key) {
  // tune() returns once the search's trials, inputs and buffers are released: what is left
  // is the report and what the build needs.
  TuneReport report = impl_->tune(op, key);
  return Deferred(op, key, std::move(report), advisory_build(options().hooks));
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
std::optional<Choice> Tuner::settled(const OpBase& op, const Key& key) const {
  return impl_->settled(op, key);
}
bool Tuner::live_failure(const OpBase& op, const Key& key, std::size_t index,
                         const std::exception_ptr& error) {
  return impl_->live_failure(op, key, index, error);
}
Identity Tuner::identity(const OpBase& op, const Key& key) const {
  return impl_->identity(op, key);
}
Store* Tuner::store() {
  return impl_->store();
}

std::optional<std::size_t> Tuner::hot_hit(const OpBase& op, const Digest& values) const {
  return impl_->hot_hit(op, values);
}

}  // namespace tunekit
