#include "core/safe_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>

#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

namespace fs = std::filesystem;

std::string quoted(const fs::path& path) {
  return "'" + path.string() + "'";
}

std::string strerror_text(int error) {
  return std::strerror(error);
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Closes on every path out, so an exception never leaks a descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

std::string temp_prefix(const fs::path& path) {
  return "." + path.filename().string() + ".tmp-";
}

bool process_is_dead(const std::string& pid_text) {
  if (pid_text.empty() || pid_text.size() > 9 ||
      pid_text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const long pid = std::stol(pid_text);
  // EPERM means alive (another user's process): only ESRCH proves the writer is gone.
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Removes `.<file>.tmp-<pid>-*` left by writers that died before their rename. Only our own
// files: in a shared directory another user's entries are none of our business.
void remove_stale_temps(const fs::path& path) {
  const fs::path dir = directory_of(path);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;  // the write itself reports an unusable directory
  const std::string prefix = temp_prefix(path);
  while (const dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const auto dash = rest.find('-');
    if (dash == std::string::npos || !process_is_dead(rest.substr(0, dash))) continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        st.st_uid == ::geteuid())
      ::unlinkat(::dirfd(d), name.c_str(), 0);
  }
  ::closedir(d);
}

void refuse_non_regular_target(const fs::path& path, std::string_view what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw UsageError("cannot write the " + std::string(what) + " " + quoted(path) + ": " +
                     strerror_text(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw UsageError(
        "refusing to write the " + std::string(what) + " " + quoted(path) + ": it is " +
        file_kind(st.st_mode) +
        ", and only a regular file is ever replaced; remove it or choose another path");
  }
}

std::string random_suffix() {
  std::random_device device;
  std::uniform_int_distribution<unsigned long long> pick;
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", pick(device));
  return text;
}

// Creates the temp file exclusively; a name someone planted (even a symlink) is never opened.
Fd create_temp(const fs::path& path, fs::path& temp, std::string_view what) {
  const std::string base = temp_prefix(path) + std::to_string(::getpid()) + "-";
  for (int attempt = 0; attempt < 8; ++attempt) {
    temp = directory_of(path) / (base + random_suffix());
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() >= 0) {
      ::fchmod(fd.get(), 0600);  // the umask may only remove bits; this states the mode
      return Fd(fd.release());
    }
    if (errno != EEXIST) {
      throw UsageError("cannot write the " + std::string(what) + " " + quoted(path) +
                       ": creating a temp file in " + quoted(directory_of(path)) +
                       " failed: " + strerror_text(errno));
    }
  }
  throw UsageError("cannot write the " + std::string(what) + " " + quoted(path) +
                   ": no fresh temp file name could be created");
}

// 0 on success, else the errno of the failing write or fsync.
int write_all_and_sync(int fd, std::string_view bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    written += static_cast<std::size_t>(n);
  }
  return ::fsync(fd) == 0 ? 0 : errno;
}

void sync_directory(const fs::path& dir) {
  if (int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);  // makes the rename durable; a filesystem that cannot is no reason to fail
    ::close(fd);
  }
}

}  // namespace

std::string file_kind(unsigned mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "an unusual file";
}

void write_file_atomically(const fs::path& path, std::string_view bytes, std::string_view what) {
  if (path.filename().empty())
    throw UsageError("cannot write the " + std::string(what) + " " + quoted(path) +
                     ": the path names no file");
  refuse_non_regular_target(path, what);
  remove_stale_temps(path);
  fs::path temp;
  Fd fd = create_temp(path, temp, what);
  const int error = write_all_and_sync(fd.get(), bytes);
  const int closed = ::close(fd.release());
  if (error != 0 || closed != 0) {
    ::unlink(temp.c_str());
    throw UsageError("cannot write the " + std::string(what) + " " + quoted(path) + ": " +
                     strerror_text(error != 0 ? error : errno));
  }
  try {
    refuse_non_regular_target(path, what);  // something may have appeared meanwhile
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int rename_error = errno;
    ::unlink(temp.c_str());
    throw UsageError("cannot write the " + std::string(what) + " " + quoted(path) +
                     ": rename failed: " + strerror_text(rename_error));
  }
  sync_directory(directory_of(path));
}

void make_private_directories(const fs::path& path) {
  if (path.empty()) return;
  fs::path partial;
  for (const fs::path& part : path) {
    partial /= part;
    struct stat st {};
    if (::stat(partial.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        throw UsageError("cannot create the directory " + quoted(path) + ": " + quoted(partial) +
                         " is " + file_kind(st.st_mode));
      continue;
    }
    if (errno != ENOENT || (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)) {
      throw UsageError("cannot create the directory " + quoted(path) + ": " + quoted(partial) +
                       ": " + strerror_text(errno));
    }
    ::chmod(partial.c_str(), 0700);  // as for files: the umask must not decide the mode
  }
}

Trust directory_trust(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return {Distrust::uninspectable,
            quoted(path) + " cannot be inspected: " + strerror_text(errno)};
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return {Distrust::owned_by_other_user, quoted(path) + " is owned by another user (uid " +
                                               std::to_string(st.st_uid) + ", you are uid " +
                                               std::to_string(me) + ")"};
  }
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  const bool sticky = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  if (others_write && !sticky) {
    return {Distrust::writable_by_others, quoted(path) + " is writable by others (mode " +
                                              octal_mode(st.st_mode) + "); chmod go-w it"};
  }
  return {};
}

std::string read_outside_file(const fs::path& path, std::size_t max_bytes, std::string_view what) {
  const std::string name = std::string(what) + " " + quoted(path);
  struct stat st {};
  // Judge the type before opening: opening a device or a FIFO may itself have effects.
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError("cannot read the " + name + ": " + strerror_text(errno));
  if (!S_ISREG(st.st_mode))
    throw UsageError("refusing to read the " + name + ": it is " + file_kind(st.st_mode) +
                     ", not a regular file");
  // O_NONBLOCK: if a FIFO was swapped in since the stat, the open must not wait for a writer.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) throw UsageError("cannot read the " + name + ": " + strerror_text(errno));
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw UsageError("refusing to read the " + name + ": it is not a regular file");
  const auto cap_text = [&] { return "the cap is " + std::to_string(max_bytes) + " bytes"; };
  if (static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw UsageError("refusing to read the " + name + ": it is " + std::to_string(st.st_size) +
                     " bytes; " + cap_text());
  std::string bytes;
  bytes.resize(static_cast<std::size_t>(st.st_size) + 1);  // one spare byte detects growth
  std::size_t got = 0;
  while (true) {
    if (got == bytes.size()) {
      if (got > max_bytes)
        throw UsageError("refusing to read the " + name + ": it grew past the cap while read; " +
                         cap_text());
      bytes.resize(std::min(max_bytes + 1, bytes.size() * 2));
    }
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError("cannot read the " + name + ": " + strerror_text(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

bool looks_gzipped(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip_bounded(std::string_view bytes, std::size_t max_out, std::string_view what) {
  if (bytes.size() > UINT_MAX)
    throw UsageError("refusing to decompress the " + std::string(what) + ": it is over 4 GiB");
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK)  // 15 + 16: a gzip wrapper, the largest window
    throw UsageError("cannot decompress the " + std::string(what) + ": zlib failed to start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());  // callers' inputs are capped far below 4 GiB
  std::string out;
  char buffer[1 << 16];
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    const std::size_t produced = sizeof buffer - z.avail_out;
    if (out.size() + produced > max_out) {
      inflateEnd(&z);
      throw UsageError("refusing to decompress the " + std::string(what) +
                       ": it inflates past the cap of " + std::to_string(max_out) +
                       " bytes (a gzip bomb, or a file too large to use)");
    }
    out.append(buffer, produced);
    // Concatenated members are one file (as gzip writes them); trailing non-gzip bytes are
    // ignored, as gzread ignores them.
    const std::string_view rest(reinterpret_cast<const char*>(z.next_in), z.avail_in);
    if (rc == Z_STREAM_END && looks_gzipped(rest) && inflateReset(&z) == Z_OK) continue;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK && (z.avail_in > 0 || z.avail_out == 0)) continue;
    const std::string why = rc == Z_OK || rc == Z_BUF_ERROR ? "the stream is truncated"
                                                            : (z.msg ? z.msg : "corrupt data");
    inflateEnd(&z);
    throw UsageError("cannot decompress the " + std::string(what) + ": " + why);
  }
  inflateEnd(&z);
  return out;
}

}  // namespace tunekit::detail
