// What the SQLite store's tests do around a store file: a directory for it, a store holding
// one choice, its bytes; hold its lock from a second connection, and run a probe as a user who
// does not own the file.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tunekit/store.hpp"
#include "unit/store/store_samples.hpp"

namespace tunekit::testing {

// A temporary directory's path, not created: the store creates it (private) on first open,
// which some tests check. Removed with the object.
class StoreDir {
 public:
  StoreDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("tunekit-store-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
  }
  ~StoreDir() { std::filesystem::remove_all(path_); }
  StoreDir(const StoreDir&) = delete;
  StoreDir& operator=(const StoreDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

inline std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string joined(const std::vector<std::string>& warnings) {
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  return all;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// choices.db in `dir`, holding the sample choice for `digest`.
inline std::filesystem::path store_with(const StoreDir& dir, const std::string& digest) {
  const std::filesystem::path file = dir / "choices.db";
  auto store = open_store("sqlite:" + file.string(), {});
  EXPECT_NE(store, nullptr);
  if (store) store->put(sample(digest));
  return file;
}

// A second connection holding a write transaction (BEGIN EXCLUSIVE plus a write); with
// `exclusive_locking` it also keeps readers out (locking_mode=EXCLUSIVE takes the file lock).
class LockHolder {
 public:
  LockHolder(const std::filesystem::path& file, bool exclusive_locking) {
    EXPECT_EQ(sqlite3_open(file.c_str(), &db_), SQLITE_OK);
    if (exclusive_locking) exec("PRAGMA locking_mode=EXCLUSIVE");
    exec("BEGIN EXCLUSIVE");
    exec("INSERT OR REPLACE INTO tunekit_meta(name, value) VALUES('held', '1')");
  }
  ~LockHolder() {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
  }
  LockHolder(const LockHolder&) = delete;
  LockHolder& operator=(const LockHolder&) = delete;

 private:
  void exec(const char* sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql, nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  }
  sqlite3* db_ = nullptr;
};

// Runs `probe` in a child process as a user who does not own the test's files (uid 65534 when
// the tests run as root, who may write anything; else this user), and returns what it
// printed. The child owns everything under `dir` when the parent is root.
// `meanwhile` runs in this process while the child does.
inline std::string as_user(const std::filesystem::path& dir,
                           const std::function<std::string()>& probe,
                           const std::function<void()>& meanwhile = {}) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (::geteuid() == 0) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
        if (::lchown(entry.path().c_str(), 65534, 65534) != 0) ::_exit(3);
      if (::chown(dir.c_str(), 65534, 65534) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)
        ::_exit(3);
    }
    const std::string out = probe();
    const ssize_t written = ::write(fds[1], out.data(), out.size());
    ::_exit(written == static_cast<ssize_t>(out.size()) ? 0 : 4);
  }
  ::close(fds[1]);
  if (meanwhile) meanwhile();
  std::string out;
  char buffer[512];
  ssize_t got;
  while ((got = ::read(fds[0], buffer, sizeof buffer)) > 0) out.append(buffer, got);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out += " [child failed]";
  return out;
}

}  // namespace tunekit::testing
