// A search's turn on a device (DESIGN §11): this process's turn (Device::try_begin_search)
// and, where a lock file is named, the cross-process DeviceLock. Nobody waits in-process; a
// turn may wait for another process's lock when told to.
#pragma once

#include <optional>
#include <string>

#include "tunekit/device.hpp"
#include "tuner/device_lock.hpp"

namespace tunekit::detail {

class DeviceTurn {
 public:
  // `lock_path` "": in-process only. `wait_seconds` 0: a busy lock is refused at once.
  DeviceTurn(Device& device, const std::string& lock_path, double wait_seconds);
  ~DeviceTurn();
  DeviceTurn(const DeviceTurn&) = delete;
  DeviceTurn& operator=(const DeviceTurn&) = delete;

  bool granted() const { return refusal_.empty(); }
  // Why the turn was refused (the reason the contender's default is served with).
  const std::string& refusal() const { return refusal_; }
  // The turn was granted after waiting for another process: the store may know the key now.
  bool waited() const { return waited_; }
  // Set when the lock file was unusable: the turn is granted in-process only.
  const std::string& warning() const { return warning_; }

 private:
  void take_lock(const std::string& lock_path, double wait_seconds);

  Device* device_ = nullptr;  // set while this process's turn is held
  std::optional<DeviceLock> lock_;
  std::string refusal_;
  std::string warning_;
  bool waited_ = false;
};

}  // namespace tunekit::detail
