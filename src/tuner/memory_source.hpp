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
    auto index = table_.find(op, key);
    if (index && *index == kRetracted) return std::nullopt;
    return index;
  }
  void publish(const Digest& op, const Digest& key, std::size_t index) {
    table_.publish(op, key, index);
  }
  // The next request for (op, key) misses and asks the rest of the chain.
  void retract(const Digest& op, const Digest& key) { table_.publish(op, key, kRetracted); }

  std::optional<Served> find(ServeRequest& request) override;
  void record(ServeRequest& request, const Served& served) override;

 private:
  static constexpr std::size_t kRetracted = std::numeric_limits<std::size_t>::max();
  const DeviceIdentity& device_;
  const TunerOptions& options_;
  ChoiceTable table_;
};

}  // namespace tunekit::detail
