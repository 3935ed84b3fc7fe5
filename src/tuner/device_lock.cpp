#include "tuner/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "core/safe_file.hpp"
#include "tunekit/calibration.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

std::string errno_text(int error) {
  return std::system_category().message(error);
}

}  // namespace

std::string DeviceLock::path_for(const std::string& dir, const DeviceIdentity& device) {
  return (std::filesystem::path(dir) / (device_digest(device) + ".lock")).string();
}

DeviceLock::DeviceLock(std::string path) : path_(std::move(path)) {
  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  try {
    make_private_directories(dir);
  } catch (const UsageError& e) {
    problem_ = e.what();
    return;
  }
  // Another user who can write the directory could swap the lock file and let two searches
  // time each other.
  if (const Trust trust = directory_trust(dir); !trust.trusted()) {
    problem_ = trust.message;
    return;
  }
  // O_NOFOLLOW: a symlink planted at the path is refused, not followed. O_NONBLOCK: a FIFO
  // there cannot stall the open.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    problem_ = "cannot open " + path_ + ": " + errno_text(errno);
    return;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    problem_ = path_ + " is not a regular file";
  } else if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    // Planted by another user, who could hold it for good and keep every search off.
    problem_ = path_ + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  }
  if (!problem_.empty()) {
    ::close(fd_);
    fd_ = -1;
  }
}

DeviceLock::~DeviceLock() {
  if (fd_ < 0) return;
  // Unlocked explicitly: a forked worker sharing the descriptor must not keep it locked.
  if (held_) ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

DeviceLock::State DeviceLock::try_lock() {
  if (fd_ < 0) return State::unusable;
  if (held_) return State::held;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return State::busy;
    problem_ = "cannot lock " + path_ + ": " + errno_text(errno);
    return State::unusable;
  }
  held_ = true;
  return State::held;
}

DeviceLock::State DeviceLock::lock_within(double seconds) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(std::max(seconds, 0.0));
  // Polled rather than a blocking flock, so the wait is bounded without signals.
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    const State state = try_lock();
    if (state != State::busy || clock::now() >= deadline) return state;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    std::this_thread::sleep_for(std::clamp(pause, std::chrono::milliseconds(1),
                                           std::max(left, std::chrono::milliseconds(1))));
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

}  // namespace tunekit::detail
