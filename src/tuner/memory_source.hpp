// The first link of the chain: this process's table (DESIGN §7). Its hit is the hot path; a
// retracted choice (its candidate failed live) reads as a miss.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>

#include "tuner/choice_source.hpp"
#include "tuner/choice_table.hpp"

namespace tunekit::detail {

class MemorySource final : public ChoiceSource {
 public:
  MemorySource(const DeviceIdentity& device, const TunerOptions& options)
      : device_(device), options_(options) {}

  std::optional<std::size_t> hit(const Digest& op, const Digest& key) const {
    return served(table_.find(op, key));
  }
  // Tuner::run's probe for an op with a typed key: `values` is OpBase::hot_digest of the
  // call's raw key values.
  std::optional<std::size_t> hot_hit(const Digest& op, const Digest& values) const {
    return served(hot_.find(op, values));
  }
  // Publishes the choice under the canonical key and, when the op has a typed key whose
  // names the key's fields are, under the hot digest of the key's values too.
  void publish(const OpBase& op, const Key& key, std::size_t index);
  // The next request for (op, key) misses and asks the rest of the chain (run's hot probe
  // included).
  void retract(const OpBase& op, const Key& key) { publish(op, key, kRetracted); }

  std::optional<Served> find(ServeRequest& request) override;
  void record(ServeRequest& request, const Served& served) override;

 private:
  static constexpr std::size_t kRetracted = std::numeric_limits<std::size_t>::max();
  static std::optional<std::size_t> served(std::optional<std::size_t> index) {
    if (index && *index == kRetracted) return std::nullopt;
    return index;
  }
  const DeviceIdentity& device_;
  const TunerOptions& options_;
  ChoiceTable table_;  // by (op checksum, key digest)
  ChoiceTable hot_;    // by (op checksum, hot digest of a typed key's values)
};

}  // namespace tunekit::detail
