// The model link (DESIGN §7, §9), asked only when ModelOptions::serve is set: a miss that the
// store and the artifact could not answer is served the cost model's pick instead of the
// untuned default. Nothing is run to time it and nothing is stored; the pick is validated once
// against the reference before it is served (it has never been run), and in mode cached the
// miss is still recorded as pending, so `tunekit tune --pending` measures it later.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "tuner/choice_source.hpp"
#include "tuner/default_source.hpp"
#include "tuner/live_bans.hpp"
#include "tuner/model_choice.hpp"
#include "tuner/revalidation.hpp"

namespace tunekit::detail {

class ModelSource final : public ChoiceSource {
 public:
  using Envelopes = std::function<const EnvelopeSource&()>;

  // `envelopes`: the tuner's envelope, resolved on first use. `pending`: records the miss.
  // `store` (may be null) and `bans`: a candidate banned for the key is never the pick.
  ModelSource(Store* store, const DeviceIdentity& device, const TunerOptions& options,
              Envelopes envelopes, Revalidator& revalidator, const LiveBans& bans,
              DefaultSource& pending)
      : store_(store),
        device_(device),
        options_(options),
        envelopes_(std::move(envelopes)),
        revalidator_(revalidator),
        bans_(bans),
        pending_(pending) {}

  // The model's pick for (op, key) once it validates at `key`; nullopt when the option is off,
  // the model declines (no envelope, no work model, a failed work model), its pick is banned
  // for the key (it failed live: `identity_digest` is the key's stored identity) or fails
  // validation.
  std::optional<std::size_t> pick(const OpBase& op, const Key& key,
                                  const std::string& identity_digest);

  // Mode cached: the pick, reported with Source::model (the miss recorded as pending).
  std::optional<Served> find(ServeRequest& request) override;

 private:
  bool banned(const OpBase& op, const Key& key, const std::string& identity_digest,
              std::size_t index) const;

  Store* store_;
  const DeviceIdentity& device_;
  const TunerOptions& options_;
  Envelopes envelopes_;
  Revalidator& revalidator_;
  const LiveBans& bans_;
  DefaultSource& pending_;
};

}  // namespace tunekit::detail
