#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "store/stored_choice.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/pending.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

using Json = nlohmann::json;

// The tag object a record keeps; nullopt when it is not an object of strings.
std::optional<EnvironmentTags> tags_of(const std::string& text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  EnvironmentTags tags;
  for (const auto& [name, value] : j.items()) {
    if (!value.is_string()) return std::nullopt;
    tags[name] = value.get<std::string>();
  }
  return tags;
}

// Device identities compare as JSON values, so the field order of the text does not matter.
bool same_device(const std::string& recorded, const Json& here) {
  return Json::parse(recorded, nullptr, /*allow_exceptions=*/false) == here;
}

// One Tuner per (environment tags, numerics policy): tags are fixed once a tuner is used.
class TunerPerIdentity {
 public:
  TunerPerIdentity(Device& device, const TunerOptions& options)
      : device_(device), options_(options) {
    options_.persist.record_misses = false;  // tuning a miss must not record it again
  }

  Tuner& get(const EnvironmentTags& tags, Numerics policy) {
    auto& slot = tuners_[{tags, policy}];
    if (!slot) {
      TunerOptions o = options_;
      o.persist.environment = tags;
      o.decide.numerics_policy = policy;
      slot = std::make_unique<Tuner>(device_, std::move(o));
    }
    return *slot;
  }

 private:
  Device& device_;
  TunerOptions options_;
  std::map<std::pair<EnvironmentTags, Numerics>, std::unique_ptr<Tuner>> tuners_;
};

PendingOutcome kept(PendingMiss miss, PendingStatus status, std::string why) {
  PendingOutcome o;
  o.miss = std::move(miss);
  o.status = status;
  o.why = std::move(why);
  return o;
}

// Searches one record's key and says whether the store now serves a choice for it.
PendingOutcome tune_one(const PendingMiss& miss, const OpBase& op, TunerPerIdentity& tuners) {
  const std::optional<EnvironmentTags> tags = tags_of(miss.environment);
  const std::optional<Numerics> policy = numerics_from_string(miss.numerics_policy);
  if (!tags || !policy) {
    return kept(miss, PendingStatus::bad_record,
                !tags ? "its environment is not an object of tags: " + miss.environment
                      : "unknown numerics policy '" + miss.numerics_policy + "'");
  }
  Key key;
  try {
    key = op.parse_shape(miss.key);
  } catch (const UsageError& e) {
    return kept(miss, PendingStatus::bad_key, "the key no longer parses: " + std::string(e.what()));
  }
  Tuner& tuner = tuners.get(*tags, *policy);
  const Identity identity = tuner.identity(op, key);
  if (identity.candidates.hex() != miss.candidates) {
    return kept(miss, PendingStatus::candidates_changed,
                "the op's candidate set changed since the miss (checksum " + miss.candidates +
                    ", now " + identity.candidates.hex() +
                    "): its misses were judged under candidates that are gone");
  }
  PendingOutcome o;
  o.miss = miss;
  o.report = tuner.tune(op, key);
  Store* store = tuner.store();
  const auto stored = store ? store->find(identity.digest().hex()) : std::nullopt;
  if (!stored || !stored->stale.empty()) {
    o.status = PendingStatus::not_stored;
    o.why = "searched, but no choice was stored (" + std::string(to_string(o.report.source)) +
            (o.report.reason.empty() ? "" : ": " + o.report.reason) + ")";
    return o;
  }
  store->remove_pending(miss.identity_digest);
  return o;
}

// Opens the store the records live in; a UsageError when there is none to read.
std::unique_ptr<Store> pending_store(const TunerOptions& options) {
  StoreOpening opened =
      open_store_checked(options.persist.store, options.persist.store_options, {});
  if (opened.store) return std::move(opened.store);
  if (opened.state == StoreState::none) {
    throw UsageError("pending misses are kept in a store, and the store is '" +
                     shown_store_spec(options.persist.store) +
                     "': name one (sqlite:PATH; the CLI's default is the environment's)");
  }
  if (opened.state == StoreState::missing) return nullptr;  // nothing was ever recorded
  throw UsageError("cannot read the pending misses: " + opened.message);
}

}  // namespace

std::string_view to_string(PendingStatus status) {
  switch (status) {
    case PendingStatus::tuned:
      return "tuned";
    case PendingStatus::other_device:
      return "other_device";
    case PendingStatus::unknown_op:
      return "unknown_op";
    case PendingStatus::bad_key:
      return "bad_key";
    case PendingStatus::candidates_changed:
      return "candidates_changed";
    case PendingStatus::bad_record:
      return "bad_record";
    case PendingStatus::not_stored:
      return "not_stored";
  }
  return "unknown";
}

std::vector<PendingOutcome> tune_pending(Device& device, const TunerOptions& options,
                                         const PendingOpFinder& find_op,
                                         const PendingTuning& tuning) {
  std::vector<PendingOutcome> outcomes;
  const std::unique_ptr<Store> store = pending_store(options);
  if (!store) return outcomes;
  const Json here = Json::parse(detail::device_json(device.identity()));
  TunerPerIdentity tuners(device, options);
  for (const PendingMiss& miss : store->pending(tuning.op)) {
    const OpBase* op = same_device(miss.device, here) ? find_op(miss.op) : nullptr;
    if (!same_device(miss.device, here)) {
      outcomes.push_back(
          kept(miss, PendingStatus::other_device, "recorded on another device: tune it there"));
    } else if (!op) {
      outcomes.push_back(kept(miss, PendingStatus::unknown_op,
                              "no op named '" + miss.op + "' is known here (renamed or removed?)"));
    } else {
      outcomes.push_back(tune_one(miss, *op, tuners));
    }
    if (tuning.on_outcome) tuning.on_outcome(outcomes.back());
  }
  return outcomes;
}

}  // namespace tunekit
