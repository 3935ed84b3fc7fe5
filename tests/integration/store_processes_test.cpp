// Several processes on one store, processes killed mid-write, a store another process holds
// locked (src/store/sqlite_store.cpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fakes/fake_device.hpp"
#include "integration/child_process.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace {

namespace fs = std::filesystem;

pid_t spawn(const std::vector<std::string>& args, const std::string& stderr_file) {
  return tunekit::testing::spawn_child(args, "", stderr_file);
}

int wait_exit(pid_t pid) {
  return tunekit::testing::exit_code_of(pid);
}

std::string slurp(const std::string& file) {
  return tunekit::testing::file_text(file);
}

// The first column of every row `sql` returns, concatenated, as an outsider process would read
// it; nullopt when the file does not open (or, read-only, is not there yet) or `sql` fails.
std::optional<std::string> query(const std::string& path, const char* sql, int flags) {
  sqlite3* db = nullptr;
  std::optional<std::string> result;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    std::string text;
    const int rc = sqlite3_exec(
        db, sql,
        [](void* out, int, char** values, char**) {
          *static_cast<std::string*>(out) += values[0] ? values[0] : "";
          return 0;
        },
        &text, nullptr);
    if (rc == SQLITE_OK) result = std::move(text);
  }
  sqlite3_close(db);
  return result;
}

std::string integrity(const std::string& path) {
  return query(path, "PRAGMA integrity_check", SQLITE_OPEN_READWRITE).value_or("cannot open");
}

// Rows of the store's choices table; -1 while there is no table.
long choice_rows(const std::string& path) {
  const auto rows = query(path, "SELECT count(*) FROM choices", SQLITE_OPEN_READONLY);
  return rows ? std::atol(rows->c_str()) : -1;
}

class StoreProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tunekit-procs-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(StoreProcesses, EightProcessesOneStoreNoLostEntryNoLockErrors) {
  const std::string store = (dir_ / "shared/choices.db").string();
  constexpr int kProcs = 8;
  constexpr int kKeys = 40;  // each process: 40 keys, overlapping its neighbour by half
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pids.push_back(spawn(
        {TUNEKIT_STORE_WORKER, store, std::to_string(p * kKeys / 2), std::to_string(kKeys), "3"},
        (dir_ / ("worker" + std::to_string(p) + ".err")).string()));
    ASSERT_GT(pids.back(), 0);
  }
  for (int p = 0; p < kProcs; ++p) {
    std::string err_file = (dir_ / ("worker" + std::to_string(p) + ".err")).string();
    EXPECT_EQ(wait_exit(pids[p]), 0) << slurp(err_file);
    EXPECT_EQ(slurp(err_file).find("locked"), std::string::npos) << slurp(err_file);
  }
  EXPECT_EQ(integrity(store), "ok");
  auto opened = tunekit::open_store("sqlite:" + store, {});
  ASSERT_NE(opened, nullptr);
  EXPECT_EQ(opened->list().size(), static_cast<std::size_t>((kProcs + 1) * kKeys / 2));
}

TEST_F(StoreProcesses, KilledWritersNeverCorruptTheStore) {
  const std::string store = (dir_ / "choices.db").string();
  std::mt19937 rng(20261129);  // seeded: the kill points are reproducible
  std::uniform_int_distribution<int> delay_us(0, 40000);
  for (int round = 0; round < 20; ++round) {
    const long rows_before = std::max(0L, choice_rows(store));
    pid_t pid = spawn({TUNEKIT_STORE_WORKER, store, std::to_string(round * 50), "50", "1000"},
                      (dir_ / "killed.err").string());
    ASSERT_GT(pid, 0);
    // The kill must land while the worker writes, not before it started: a slow start (ASan on
    // a loaded CI machine) took longer than any fixed delay. The clock starts at its first
    // new entry.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (choice_rows(store) <= rows_before && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    const bool writing = choice_rows(store) > rows_before;
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    kill(pid, SIGKILL);
    wait_exit(pid);
    ASSERT_TRUE(writing) << "round " << round << ": the worker wrote nothing in 60 s\n"
                         << slurp((dir_ / "killed.err").string());
    ASSERT_EQ(integrity(store), "ok") << "round " << round;
    std::vector<std::string> warnings;
    auto opened = tunekit::open_store("sqlite:" + store,
                                      [&](std::string_view m) { warnings.emplace_back(m); });
    ASSERT_NE(opened, nullptr) << "round " << round << ": "
                               << (warnings.empty() ? "" : warnings[0]);
    EXPECT_GE(static_cast<long>(opened->list().size()), rows_before) << "round " << round;
  }
}

// A child process holding a write transaction on `path` until the object goes; with
// `exclusive_locking` readers are kept out too.
class LockingProcess {
 public:
  LockingProcess(const std::string& path, bool exclusive_locking) {
    int ready[2];
    if (::pipe(ready) != 0 || ::pipe(release_) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(ready[0]);
      ::close(release_[1]);
      sqlite3* db = nullptr;
      bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK;
      if (exclusive_locking) ok = ok && exec(db, "PRAGMA locking_mode=EXCLUSIVE");
      ok = ok && exec(db, "BEGIN EXCLUSIVE") &&
           exec(db, "INSERT OR REPLACE INTO tunekit_meta(name, value) VALUES('held', '1')");
      char byte = ok ? 'y' : 'n';
      if (::write(ready[1], &byte, 1) != 1) ::_exit(2);
      while (::read(release_[0], &byte, 1) > 0) {
      }
      ::_exit(0);
    }
    ::close(ready[1]);
    ::close(release_[0]);
    char byte = 0;
    holding_ = ::read(ready[0], &byte, 1) == 1 && byte == 'y';
    ::close(ready[0]);
  }
  ~LockingProcess() {
    ::close(release_[1]);
    if (pid_ > 0) wait_exit(pid_);
  }
  LockingProcess(const LockingProcess&) = delete;
  LockingProcess& operator=(const LockingProcess&) = delete;
  bool holding() const { return holding_; }

 private:
  static bool exec(sqlite3* db, const char* sql) {
    return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  int release_[2] = {-1, -1};
  pid_t pid_ = -1;
  bool holding_ = false;
};

struct CachedRead {
  tunekit::Source source;
  double seconds;
  std::vector<std::string> warnings;
};

// A fresh tuner in mode cached, as `tunekit tune --mode cached` makes one, asking for key n=1.
CachedRead cached_read(const std::string& store) {
  tunekit::fakes::FakeDevice device;
  auto op = tunekit::fakes::make_fake_op(device, {"def", "fast"}, "def");
  CachedRead r{};
  tunekit::TunerOptions options;
  options.persist.store = "sqlite:" + store;
  options.decide.mode = tunekit::Mode::cached;
  options.hooks.log =
      tunekit::Log::warnings_to([&](std::string_view m) { r.warnings.emplace_back(m); });
  const auto start = std::chrono::steady_clock::now();
  tunekit::Tuner tuner(device, options);
  r.source = tuner.select(*op, tunekit::Key{{"n", 1}}).source;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

TEST_F(StoreProcesses, ALockedStoreAnswersACachedReadWithinThreeSeconds) {
  const std::string store = (dir_ / "choices.db").string();
  ASSERT_EQ(wait_exit(spawn({TUNEKIT_STORE_WORKER, store, "1", "1"}, (dir_ / "tune.err").string())),
            0)
      << slurp((dir_ / "tune.err").string());
  {
    // Another process writing: the stored choice is still readable, and served.
    LockingProcess writer(store, /*exclusive_locking=*/false);
    ASSERT_TRUE(writer.holding());
    const CachedRead r = cached_read(store);
    EXPECT_EQ(r.source, tunekit::Source::cache_replay);
    EXPECT_LT(r.seconds, 3.0);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  }
  {
    // Another process keeping readers out: the default, memory-only, and a warning naming
    // the lock (not "corrupt").
    LockingProcess holder(store, /*exclusive_locking=*/true);
    ASSERT_TRUE(holder.holding());
    const CachedRead r = cached_read(store);
    EXPECT_EQ(r.source, tunekit::Source::search_disabled);
    EXPECT_LT(r.seconds, 3.0);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("locked by another process"), std::string::npos) << r.warnings[0];
    EXPECT_EQ(r.warnings[0].find("corrupt"), std::string::npos) << r.warnings[0];
  }
  // Released: served again.
  EXPECT_EQ(cached_read(store).source, tunekit::Source::cache_replay);
}

}  // namespace
