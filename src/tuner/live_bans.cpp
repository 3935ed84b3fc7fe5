#include "tuner/live_bans.hpp"

namespace tunekit::detail {

void LiveBans::ban(const Digest& op, const Digest& key, std::size_t index, std::string reason) {
  std::lock_guard lock(mutex_);
  bans_[where(op, key)][index] = std::move(reason);
}

bool LiveBans::banned(const Digest& op, const Digest& key, std::size_t index) const {
  std::lock_guard lock(mutex_);
  auto it = bans_.find(where(op, key));
  return it != bans_.end() && it->second.count(index) > 0;
}

std::map<std::size_t, std::string> LiveBans::of(const Digest& op, const Digest& key) const {
  std::lock_guard lock(mutex_);
  auto it = bans_.find(where(op, key));
  return it == bans_.end() ? std::map<std::size_t, std::string>{} : it->second;
}

}  // namespace tunekit::detail
