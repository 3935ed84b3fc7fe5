#include "tunekit/tuner.hpp"

#include <mutex>
#include <set>
#include <utility>

#include "tunekit/errors.hpp"
#include "tuner/choice_table.hpp"
#include "tuner/search.hpp"

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
    if (!(options_.tie_band >= 0 && options_.tie_band < 1))
      throw UsageError("TunerOptions: tie_band must be in [0, 1), e.g. 0.02 for 2 %");
  }

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
    if (!force) {
      if (options_.mode == Mode::off) return serve_default(Source::use_default, "mode is off");
      if (options_.mode == Mode::cached)
        return serve_default(Source::search_disabled, "mode is cached and no choice is known");
    }
    if (searches_on_this_thread > 0)
      return serve_default(Source::use_default, "nested request from inside a search");

    PendingKey pending{op.checksum(), key.digest()};
    {
      std::lock_guard lock(pending_mutex_);
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

    TuneReport r = detail::exhaustive_search(device_, op, key, options_);
    fill_identity(r, op, key);
    table_.publish(pending.op, pending.key, r.winner);
    Choice choice{r.winner, r.source};
    if (report) *report = std::move(r);
    return choice;
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
    r.winner_name = op.candidates()[index].name;
    r.default_index = op.default_index(key);
    r.default_name = op.candidates()[r.default_index].name;
    return r;
  }

  Device& device_;
  TunerOptions options_;
  detail::ChoiceTable table_;
  std::mutex pending_mutex_;
  std::set<PendingKey> pending_;
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

}  // namespace tunekit
