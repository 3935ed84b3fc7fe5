// Candidates that failed live, per (op, key), for the life of a tuner (DESIGN §7): a banned
// candidate is never chosen again for that key (the store keeps the ban for later processes).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "tunekit/key.hpp"

namespace tunekit::detail {

class LiveBans {
 public:
  void ban(const Digest& op, const Digest& key, std::size_t index, std::string reason);
  bool banned(const Digest& op, const Digest& key, std::size_t index) const;
  // index -> why, for one key.
  std::map<std::size_t, std::string> of(const Digest& op, const Digest& key) const;

 private:
  using Where = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>;
  static Where where(const Digest& op, const Digest& key) {
    return {op.high, op.low, key.high, key.low};
  }
  mutable std::mutex mutex_;
  std::map<Where, std::map<std::size_t, std::string>> bans_;
};

}  // namespace tunekit::detail
