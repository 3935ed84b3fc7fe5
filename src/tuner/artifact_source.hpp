// The artifact link (DESIGN §8): a deployable artifact's choice serves once it validates in
// this process (one that fails is skipped with a warning: artifacts are reviewed files, never
// rewritten here). In mode force it records the measured winner as a fresh artifact, before
// the store keeps it and the table publishes it: a write that fails stores and publishes
// nothing.
#pragma once

#include "tunekit/store.hpp"
#include "tuner/choice_source.hpp"
#include "tuner/live_bans.hpp"
#include "tuner/revalidation.hpp"

namespace tunekit::detail {

class ArtifactSource final : public ChoiceSource {
 public:
  // `store` (may be null): its bans hold for artifacts too.
  ArtifactSource(Store* store, const DeviceIdentity& device, const TunerOptions& options,
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
