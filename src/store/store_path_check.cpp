#include "store/store_path_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/safe_file.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

namespace fs = std::filesystem;

std::string directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

StorePathCheck refuse(StoreState state, std::string why) {
  return {state, state != StoreState::missing, std::move(why)};
}

// Read-only when the file or its directory cannot be written: SQLite needs both (the -wal and
// -shm files live beside the store).
StorePathCheck check_existing(const std::string& path) {
  if (::access(path.c_str(), R_OK) != 0)
    return refuse(StoreState::unreadable,
                  "not readable by you (" + std::string(std::strerror(errno)) + ")");
  const std::string dir = directory_of(path);
  if (::access(path.c_str(), W_OK) != 0)
    return {StoreState::read_only, true,
            "not writable by you (" + std::string(std::strerror(errno)) + ")"};
  if (::access(dir.c_str(), W_OK) != 0) {
    return {StoreState::read_only, true,
            "in a directory not writable by you (" + dir + ": " + std::strerror(errno) + ")"};
  }
  return {StoreState::ready, true, {}};
}

// A store another user can plant or rewrite would serve that user's choices: its directory
// and the file must be this user's (or root's) and not writable by others.
StorePathCheck check_trust(const std::string& path, bool exists) {
  for (const std::string& what : {directory_of(path), exists ? path : std::string()}) {
    if (what.empty()) continue;
    const Trust trust = directory_trust(what);
    if (trust.problem == Distrust::uninspectable)
      return refuse(StoreState::unreadable, "not reachable by you (" + trust.message + ")");
    if (!trust.trusted()) {
      return refuse(StoreState::untrusted, "refused: " + trust.message +
                                               "; another user could plant the choices it serves");
    }
  }
  return {StoreState::ready, exists, {}};
}

}  // namespace

StorePathCheck check_store_path(const std::string& path, const StoreOptions& options) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    const int error = errno;
    if (error != ENOENT && error != ENOTDIR) {
      return refuse(StoreState::unreadable,
                    "not reachable by you (" + std::string(std::strerror(error)) + ")");
    }
    if (!options.create) return refuse(StoreState::missing, "not there");
    return options.trust ? StorePathCheck{StoreState::ready, false, {}} : check_trust(path, false);
  }
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) {
    return refuse(StoreState::not_a_file,
                  "a symbolic link to nothing (" + std::string(std::strerror(errno)) + ")");
  }
  if (!S_ISREG(target.st_mode)) {
    std::string what = file_kind(target.st_mode);
    if (S_ISLNK(link.st_mode)) what = "a symbolic link to " + what;
    return refuse(StoreState::not_a_file, what + ", not a regular file");
  }
  if (!options.trust) {
    if (StorePathCheck trust = check_trust(path, true); trust.state != StoreState::ready)
      return trust;
  }
  return check_existing(path);
}

std::string create_store_file(const std::string& path) {
  try {
    make_private_directories(fs::path(path).parent_path());
  } catch (const UsageError& e) {
    return e.what();
  }
  // 0600 before SQLite creates it with the umask's mode; -wal/-shm follow the file's mode.
  // O_EXCL|O_NOFOLLOW: a symlink planted since the check is never followed.
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return errno == EEXIST ? std::string() : std::strerror(errno);
  ::close(fd);
  return {};
}

}  // namespace tunekit::detail
