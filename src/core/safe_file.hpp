// The one way tunekit writes a file and the one way it reads a file that came from outside:
// directories others can write to must not let them redirect, replace or stall tunekit.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace tunekit::detail {

// Publishes `bytes` at `path` atomically: a fresh temp file `.<file>.tmp-<pid>-<random>` in the
// target directory (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), written whole, fsynced, renamed over
// the target, then the directory fsynced. Refuses (UsageError naming the path and what sits
// there) to replace anything but a regular file; a symlink at the target is never followed.
// Temp files of this target left by dead writers are removed first. The directory must exist
// (see make_private_directories). `what` names the file in messages ("artifact").
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                           std::string_view what = "file");

// Creates the missing directories of `path` with mode 0700 (existing ones are left as they
// are). UsageError when a component is not a directory or cannot be created.
// What a file type is (st_mode), for a message that tells the user what they are looking at:
// "a FIFO", "a directory", "a symbolic link", ...
std::string file_kind(unsigned mode);

void make_private_directories(const std::filesystem::path& path);

// Whether a directory (or a file) can be trusted not to hold what another user planted.
enum class Distrust {
  none,                 // trusted, or missing (nothing to distrust yet)
  writable_by_others,   // group/other write permission without the sticky bit
  owned_by_other_user,  // owned by neither the effective uid nor root
  uninspectable,        // exists but stat failed (e.g. permission denied on a parent)
};
struct Trust {
  Distrust problem = Distrust::none;
  std::string message;  // names the path, its mode and owner; empty when trusted
  bool trusted() const { return problem == Distrust::none; }
};
// Follows symlinks (a symlinked cache directory is judged by its target). Root-owned paths
// count as trusted: root can already do anything to the user. A sticky directory (like /tmp)
// writable by others is tolerated: others cannot replace what the user created there, and
// what they plant beforehand is caught by checking the file's owner.
Trust directory_trust(const std::filesystem::path& path);

// The bytes of an outside file: a regular file only (a symlink to one is fine; a FIFO, device,
// socket or directory is refused without blocking), at most `max_bytes` (a larger file, or one
// that grows past the cap while read, is refused naming its size and the cap). UsageError on
// every failure, naming `what` ("artifact", "Kernel Tuner cache") and the path.
std::string read_outside_file(const std::filesystem::path& path, std::size_t max_bytes,
                              std::string_view what);

// True when `bytes` starts with the gzip magic.
bool looks_gzipped(std::string_view bytes);

// Inflates gzip `bytes` (several members are concatenated) into at most `max_out` bytes; a
// stream that would inflate past the cap (a gzip bomb) is refused, as are truncated or corrupt
// streams. UsageError naming `what`.
std::string gunzip_bounded(std::string_view bytes, std::size_t max_out, std::string_view what);

}  // namespace tunekit::detail
