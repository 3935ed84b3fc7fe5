#include "tuner/device_turn.hpp"

#include <fmt/format.h>

namespace tunekit::detail {

DeviceTurn::DeviceTurn(Device& device, const std::string& lock_path, double wait_seconds) {
  if (!device.try_begin_search()) {
    refusal_ = "another search is running on this device";
    return;
  }
  device_ = &device;
  if (!lock_path.empty()) take_lock(lock_path, wait_seconds);
  if (!granted()) {
    device_->end_search();
    device_ = nullptr;
  }
}

DeviceTurn::~DeviceTurn() {
  lock_.reset();  // the other processes' turn comes before this process's next search
  if (device_) device_->end_search();
}

void DeviceTurn::take_lock(const std::string& lock_path, double wait_seconds) {
  lock_.emplace(lock_path);
  DeviceLock::State state = lock_->try_lock();
  if (state == DeviceLock::State::busy && wait_seconds > 0) {
    waited_ = true;
    state = lock_->lock_within(wait_seconds);
  }
  if (state == DeviceLock::State::held) return;
  if (state == DeviceLock::State::unusable) {
    // Advisory: an unusable lock file must not stop tuning, only its exclusion of others.
    warning_ = fmt::format(
        "device lock not used ({}): searching without excluding other "
        "processes; fix the directory or set TunerOptions::persist.lock_dir",
        lock_->problem());
  } else if (waited_) {
    refusal_ = fmt::format(
        "another process kept searching on this device past the {:g} s wait "
        "(lock {})",
        wait_seconds, lock_path);
  } else {
    refusal_ = fmt::format(
        "another process is searching on this device (lock {}); to wait for it instead, set "
        "TunerOptions::persist.wait_for_device_seconds (tunekit tune --wait-for-device)",
        lock_path);
  }
  lock_.reset();
}

}  // namespace tunekit::detail
