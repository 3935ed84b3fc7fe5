// The last link (DESIGN §7): the op's default. In mode cached it is the answer to a key
// nothing is known for, and the miss is recorded in the store's pending table (once per key
// per tuner) for `tunekit tune --pending` to tune later.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "tunekit/store.hpp"
#include "tuner/choice_source.hpp"

namespace tunekit::detail {

class DefaultSource final : public ChoiceSource {
 public:
  DefaultSource(Store* store, const DeviceIdentity& device, const TunerOptions& options)
      : store_(store), device_(device), options_(options) {}

  std::optional<Served> find(ServeRequest& request) override;
  // Records the request's key in the store's pending table (once per key per tuner); the
  // model link calls it too, its pick being a guess.
  void record_miss(const ServeRequest& request);

 private:
  Store* store_;
  const DeviceIdentity& device_;
  const TunerOptions& options_;
  std::mutex mutex_;
  std::set<std::string> recorded_;  // identity digests already recorded by this tuner
};

}  // namespace tunekit::detail
