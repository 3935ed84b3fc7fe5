// One search at a time per device across processes (DESIGN §11): an advisory flock on
// <dir>/<device digest>.lock. The kernel drops the lock when its holder exits or is killed,
// so a dead search never leaves the device locked.
#pragma once

#include <string>

#include "tunekit/device.hpp"

namespace tunekit::detail {

class DeviceLock {
 public:
  enum class State {
    held,      // this object holds the lock
    busy,      // another process (or another open of the file) holds it
    unusable,  // the file could not be used: see problem()
  };

  // The lock file of `device` under `dir`.
  static std::string path_for(const std::string& dir, const DeviceIdentity& device);

  // Opens (creating the directory 0700 and the file 0600) without locking. Problems with the
  // file are kept in problem(), never thrown: the lock is advisory.
  explicit DeviceLock(std::string path);
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

  // Takes the lock if it is free; never blocks.
  State try_lock();
  // Polls try_lock() until it succeeds or `seconds` have passed.
  State lock_within(double seconds);

  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string path_;
  std::string problem_;
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace tunekit::detail
