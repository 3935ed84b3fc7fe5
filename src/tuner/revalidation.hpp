// Re-validation of a replayed choice (DESIGN §7): the first time a stored or artifact choice is
// served by a tuner, it is run once against the reference on the op's first input set (outputs
// poisoned first, in a worker process where the search's trials would be), so a store that
// outlived a kernel fix or a driver update cannot serve a wrong answer.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/tuner_options.hpp"

namespace tunekit::detail {

class Revalidator {
 public:
  Revalidator(Device& device, const TunerOptions& options);

  // The outcome of validating candidate `index` of `op` at `key`: ok, or the failure that
  // makes it stale. Once per (op, key, candidate): later calls answer from memory. nullopt
  // when the op opted out (Op::revalidate(false)) or its inputs cannot be produced (nothing
  // to judge by: the search would fail the same way).
  std::optional<Outcome> check(const OpBase& op, const Key& key, std::size_t index);

 private:
  Device& device_;
  TunerOptions options_;  // the tuner's, without its progress callbacks
  std::mutex mutex_;
  using Entry = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::size_t>;
  std::map<Entry, std::optional<Outcome>> done_;
};

}  // namespace tunekit::detail
