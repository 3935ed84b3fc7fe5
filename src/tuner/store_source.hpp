// The store link (DESIGN §7, §8): a stored choice for the identity serves once it validates in
// this process; one that fails is marked stale (kept as evidence, not served). Records a clean
// measurement.
#pragma once

#include "tunekit/store.hpp"
#include "tuner/choice_source.hpp"
#include "tuner/live_bans.hpp"
#include "tuner/revalidation.hpp"

namespace tunekit::detail {

class StoreSource final : public ChoiceSource {
 public:
  StoreSource(Store* store, const DeviceIdentity& device, const TunerOptions& options,
              Revalidator& revalidator, const LiveBans& bans)
      : store_(store), device_(device), options_(options), revalidator_(revalidator), bans_(bans) {}

  std::optional<Served> find(ServeRequest& request) override;
  void record(ServeRequest& request, const Served& served) override;

 private:
  Store* store_;
  const DeviceIdentity& device_;
  const TunerOptions& options_;
  Revalidator& revalidator_;
  const LiveBans& bans_;
};

}  // namespace tunekit::detail
