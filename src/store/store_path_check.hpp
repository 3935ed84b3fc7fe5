// What sits at a store path, judged before SQLite opens it: SQLite would block on a FIFO,
// follow a symlink to a device, and report a file it may not write as corrupt.
#pragma once

#include <string>

#include "tunekit/store.hpp"

namespace tunekit::detail {

struct StorePathCheck {
  // ready: usable read-write (or missing and StoreOptions::create), read_only, or the refusal
  // (missing, unreadable, untrusted, not_a_file, not_creatable).
  StoreState state = StoreState::ready;
  bool exists = false;
  std::string why;  // for a refusal or read_only: the cause, naming what was found
};

// Looks at `path` (and its directory) without opening the file.
StorePathCheck check_store_path(const std::string& path, const StoreOptions& options);

// Creates the missing store file 0600 (and its directory 0700); never follows a symlink.
// Empty on success, else why not.
std::string create_store_file(const std::string& path);

}  // namespace tunekit::detail
