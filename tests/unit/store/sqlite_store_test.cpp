// Tests for src/store/sqlite_store.cpp (and the path checks of store_path_check.cpp):
// permissions, bad files left untouched, locked and read-only stores, what sits at the path,
// the migration of a schema-1 file. What every store does (round trip, stale entries, bans,
// pending misses, concurrent writers) is the contract suite, store_contract_test.cpp.
#include "store/sqlite_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"
#include "unit/store/sqlite_test_support.hpp"
#include "unit/store/store_samples.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

using testing::as_user;
using testing::LockHolder;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("tunekit-store-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

using testing::sample;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using testing::Warnings;

TEST(SqliteStore, PermissionsAndReopen) {
  TempDir dir;
  fs::path file = dir / "cache/choices.db";
  {
    auto store = open_store("sqlite:" + file.string(), {});
    ASSERT_NE(store, nullptr);
    store->put(sample("persisted"));
  }
  struct stat st {};
  ASSERT_EQ(::stat(file.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = open_store("sqlite:" + file.string(), {});
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->find("persisted").has_value());
}

// Each bad file: a warning naming it, no store, and the bytes left exactly as they were.
void expect_refused_untouched(const fs::path& file, const std::string& why) {
  std::string before = bytes_of(file);
  Warnings w;
  auto store = open_store("sqlite:" + file.string(), w.sink());
  EXPECT_EQ(store, nullptr) << why;
  ASSERT_EQ(w.seen.size(), 1u) << why;
  EXPECT_NE(w.seen[0].find(file.string()), std::string::npos) << w.seen[0];
  EXPECT_EQ(bytes_of(file), before) << why;
  EXPECT_FALSE(fs::exists(file.string() + "-wal")) << why;
}

TEST(SqliteStore, BadFilesAreReportedAndLeftUntouched) {
  TempDir dir;
  fs::create_directories(dir.path());
  // Not SQLite at all.
  fs::path text = dir / "text.db";
  std::ofstream(text) << "this is not a database, it is a shopping list\n";
  expect_refused_untouched(text, "text file");

  // A real store, truncated.
  fs::path good = dir / "good.db";
  {
    auto store = open_store("sqlite:" + good.string(), {});
    for (int i = 0; i < 200; ++i) store->put(sample("d" + std::to_string(i)));
  }
  fs::remove(good.string() + "-wal");
  fs::remove(good.string() + "-shm");
  std::string full = bytes_of(good);
  ASSERT_GT(full.size(), 8192u);
  fs::path truncated = dir / "truncated.db";
  std::ofstream(truncated, std::ios::binary) << full.substr(0, full.size() / 2 + 100);
  expect_refused_untouched(truncated, "truncated");

  // Corrupt: garbage written over the middle pages.
  fs::path corrupt = dir / "corrupt.db";
  std::string mangled = full;
  for (std::size_t i = 4096; i < mangled.size() - 10; i += 7)
    mangled[i] = static_cast<char>(i * 31);
  std::ofstream(corrupt, std::ios::binary) << mangled;
  expect_refused_untouched(corrupt, "corrupt");

  // Another application's SQLite database.
  fs::path foreign = dir / "foreign.db";
  {
    sqlite3* db = nullptr;
    sqlite3_open(foreign.c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES('soup');",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  expect_refused_untouched(foreign, "foreign sqlite");

  // A newer tunekit's store.
  fs::path newer = dir / "newer.db";
  { auto store = open_store("sqlite:" + newer.string(), {}); }
  {
    sqlite3* db = nullptr;
    sqlite3_open(newer.c_str(), &db);
    sqlite3_exec(db,
                 "UPDATE tunekit_meta SET value='99' WHERE name='schema_version';"
                 "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  Warnings w;
  std::string before = bytes_of(newer);
  EXPECT_EQ(open_store("sqlite:" + newer.string(), w.sink()), nullptr);
  ASSERT_EQ(w.seen.size(), 1u);
  EXPECT_NE(w.seen[0].find("newer"), std::string::npos) << w.seen[0];
  EXPECT_EQ(bytes_of(newer), before);
}

TEST(SqliteStore, SpecsAndDefaultLocation) {
  EXPECT_EQ(open_store("none", {}), nullptr);
  EXPECT_THROW(open_store("redis://x", {}), UsageError);
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  EXPECT_EQ(default_store_path(env({{"TUNEKIT_CACHE_DIR", "/c"}, {"HOME", "/h"}})),
            "/c/choices.db");
  EXPECT_EQ(default_store_path(env({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})),
            "/x/tunekit/choices.db");
  EXPECT_EQ(default_store_path(env({{"HOME", "/h"}})), "/h/.cache/tunekit/choices.db");
}

using std::chrono::milliseconds;

std::string joined(const std::vector<std::string>& warnings) {
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  return all;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

fs::path store_with(const TempDir& dir, const std::string& digest) {
  const fs::path file = dir / "choices.db";
  auto store = open_store("sqlite:" + file.string(), {});
  EXPECT_NE(store, nullptr);
  if (store) store->put(sample(digest));
  return file;
}

TEST(SqliteStore, AStoreAnotherProcessWritesIsStillReadAtOnce) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  LockHolder holder(file, /*exclusive_locking=*/false);
  Warnings w;
  StoreOptions options;
  options.write_wait = milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  StoreOpening opened = open_store_checked("sqlite:" + file.string(), options, w.sink());
  ASSERT_NE(opened.store, nullptr) << opened.message;
  EXPECT_EQ(opened.state, StoreState::ready);
  ASSERT_TRUE(opened.store->find("aaa").has_value());
  EXPECT_LT(seconds_since(start), 3.0) << "an initialised store is opened without a write lock";
  EXPECT_TRUE(w.seen.empty()) << joined(w.seen);

  // A write waits write_wait, then says why and keeps the choice in memory; later writes do
  // not wait again, and reads go on.
  opened.store->put(sample("bbb"));
  ASSERT_EQ(w.seen.size(), 1u) << joined(w.seen);
  EXPECT_NE(w.seen[0].find("locked by another process"), std::string::npos) << w.seen[0];
  EXPECT_EQ(w.seen[0].find("corrupt"), std::string::npos) << w.seen[0];
  const auto second = std::chrono::steady_clock::now();
  opened.store->put(sample("ccc"));
  EXPECT_EQ(opened.store->remove("aaa"), 0u);
  EXPECT_LT(seconds_since(second), 0.15) << "writes waited again after a lock was waited out";
  EXPECT_EQ(w.seen.size(), 1u) << joined(w.seen);
  EXPECT_TRUE(opened.store->find("aaa").has_value());
}

TEST(SqliteStore, AStoreLockedAgainstReadersIsServedMemoryOnlyNamingTheLock) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  const std::string before = bytes_of(file);
  LockHolder holder(file, /*exclusive_locking=*/true);
  Warnings w;
  const auto start = std::chrono::steady_clock::now();
  StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
  EXPECT_LT(seconds_since(start), 3.0) << "the default read wait is at most 2 s";
  EXPECT_EQ(opened.store, nullptr);
  EXPECT_EQ(opened.state, StoreState::locked);
  ASSERT_EQ(w.seen.size(), 1u) << joined(w.seen);
  EXPECT_NE(w.seen[0].find("locked by another process"), std::string::npos) << w.seen[0];
  EXPECT_NE(w.seen[0].find(file.string()), std::string::npos) << w.seen[0];
  EXPECT_EQ(w.seen[0].find("corrupt"), std::string::npos) << "the real cause was overwritten";
  EXPECT_EQ(w.seen[0], opened.message);
  EXPECT_EQ(bytes_of(file), before);
}

// A new file another process holds a write lock on (rollback journal, before tunekit made it
// a store): creating the store waits write_wait and names the lock; the ROLLBACK that
// follows must not replace that cause with its own "no transaction is active".
TEST(SqliteStore, ALockMetWhileCreatingTheStoreIsNamedNotHiddenByTheRollback) {
  TempDir dir;
  fs::create_directories(dir.path());
  const fs::path file = dir / "new.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Warnings w;
  StoreOptions options;
  options.write_wait = milliseconds(100);
  StoreOpening opened = open_store_checked("sqlite:" + file.string(), options, w.sink());
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(opened.state, StoreState::locked) << opened.message;
  EXPECT_NE(opened.message.find("locked by another process"), std::string::npos) << opened.message;
  EXPECT_EQ(opened.message.find("transaction"), std::string::npos) << opened.message;
  // Released: the same file becomes a store.
  EXPECT_NE(open_store("sqlite:" + file.string(), {}), nullptr);
}

TEST(SqliteStore, TheReadWaitIsConfigurable) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  LockHolder holder(file, /*exclusive_locking=*/true);
  StoreOptions options;
  options.read_wait = milliseconds(0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(open_store_checked("sqlite:" + file.string(), options, {}).state, StoreState::locked);
  EXPECT_LT(seconds_since(start), 1.0);
}

// What a store at `file` serves: its state, the choice for "aaa", then what a new choice said.
std::string serve_and_put(const fs::path& file) {
  Warnings w;
  StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
  std::string out = std::string(to_string(opened.state));
  if (!opened.store) return out + " " + joined(w.seen);
  auto found = opened.store->find("aaa");
  out += found ? " found:" + found->winner : " not-found";
  out += " listed:" + std::to_string(opened.store->list().size());
  opened.store->put(sample("new"));
  opened.store->put(sample("newer"));
  out += " warnings:" + std::to_string(w.seen.size()) + " " + joined(w.seen);
  return out;
}

TEST(SqliteStore, AReadOnlyFileIsServedAndNewChoicesStayInMemory) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  ::chmod(file.c_str(), 0444);
  const std::string before = bytes_of(file);
  const std::string got = as_user(dir.path(), [&] { return serve_and_put(file); });
  EXPECT_EQ(got.rfind("read_only found:fast listed:1 warnings:1 ", 0), 0u) << got;
  EXPECT_NE(got.find("read-only (not writable by you"), std::string::npos) << got;
  EXPECT_EQ(bytes_of(file), before);
}

TEST(SqliteStore, AStoreInADirectoryYouCannotWriteIsServedReadOnly) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");  // closed: no -wal left behind
  ASSERT_FALSE(fs::exists(file.string() + "-wal"));
  ::chmod(dir.path().c_str(), 0555);
  const std::string got = as_user(dir.path(), [&] { return serve_and_put(file); });
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_EQ(got.rfind("read_only found:fast listed:1 warnings:1 ", 0), 0u) << got;
  EXPECT_NE(got.find("directory not writable by you"), std::string::npos) << got;
}

TEST(SqliteStore, AFileYouCannotReadIsReportedAsUnreadable) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  ::chmod(file.c_str(), 0000);
  const std::string got = as_user(dir.path(), [&] { return serve_and_put(file); });
  EXPECT_EQ(got.rfind("unreadable ", 0), 0u) << got;
  EXPECT_NE(got.find("not readable by you"), std::string::npos) << got;
}

// A read-only store in rollback-journal mode, locked by its writer while this session reads
// it: the read waits read_wait, says so once, and the store is memory-only from then on.
TEST(SqliteStore, ALockWaitedOutWhileReadingTurnsTheStoreMemoryOnlyOnce) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  ::chmod(file.c_str(), 0444);
  int opened[2], locked[2];
  ASSERT_EQ(::pipe(opened), 0);
  ASSERT_EQ(::pipe(locked), 0);
  char byte = 0;
  const std::string got = as_user(
      dir.path(),
      [&] {
        Warnings w;
        StoreOptions options;
        options.read_wait = milliseconds(100);
        auto store = open_store("sqlite:" + file.string(), w.sink(), options);
        const bool first = store && store->find("aaa").has_value();
        if (::write(opened[1], "o", 1) != 1 || ::read(locked[0], &byte, 1) != 1)
          return std::string("sync");
        const bool second = store && store->find("aaa").has_value();
        const auto start = std::chrono::steady_clock::now();
        const bool listed = store && !store->list().empty();
        return std::string(first ? "first " : "") + (second ? "second " : "") +
               (listed ? "listed " : "") + (seconds_since(start) < 0.09 ? "no-wait " : "waited ") +
               std::to_string(w.seen.size()) + " " + joined(w.seen);
      },
      [&] {
        ASSERT_EQ(::read(opened[0], &byte, 1), 1);
        ::chmod(file.c_str(), 0644);  // the writer (this process) may write it
        LockHolder holder(file, /*exclusive_locking=*/false);
        ASSERT_EQ(::write(locked[1], "l", 1), 1);
        ::sleep(1);  // the child waits 100 ms and lists; the holder outlives both
      });
  for (int fd : {opened[0], opened[1], locked[0], locked[1]}) ::close(fd);
  EXPECT_EQ(got.rfind("first no-wait 1 ", 0), 0u) << got;
  EXPECT_NE(got.find("locked by another process"), std::string::npos) << got;
  EXPECT_NE(got.find("reading"), std::string::npos) << got;
}

TEST(SqliteStore, AStoreInADirectoryOthersCanWriteIsRefusedUnlessTrusted) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  ::chmod(dir.path().c_str(), 0777);
  const std::string before = bytes_of(file);
  Warnings w;
  StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
  EXPECT_EQ(opened.store, nullptr);
  EXPECT_EQ(opened.state, StoreState::untrusted);
  ASSERT_EQ(w.seen.size(), 1u);
  EXPECT_NE(w.seen[0].find("writable by others"), std::string::npos) << w.seen[0];
  EXPECT_NE(w.seen[0].find("TUNEKIT_TRUST_STORE=1"), std::string::npos) << w.seen[0];
  EXPECT_EQ(bytes_of(file), before);
  // Nothing is created there either.
  EXPECT_EQ(open_store("sqlite:" + (dir / "new.db").string(), {}), nullptr);
  EXPECT_FALSE(fs::exists(dir / "new.db"));

  StoreOptions trusting;
  trusting.trust = true;
  auto store = open_store("sqlite:" + file.string(), {}, trusting);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->find("aaa").has_value());
  ::chmod(dir.path().c_str(), 0700);
}

TEST(SqliteStore, AStoreFileAnotherUserOwnsIsRefusedUnlessTrusted) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  Warnings w;
  StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
  EXPECT_EQ(opened.store, nullptr);
  EXPECT_EQ(opened.state, StoreState::untrusted);
  ASSERT_EQ(w.seen.size(), 1u);
  EXPECT_NE(w.seen[0].find("owned by another user"), std::string::npos) << w.seen[0];
  StoreOptions trusting;
  trusting.trust = true;
  auto store = open_store("sqlite:" + file.string(), {}, trusting);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->find("aaa")->winner, "fast");
}

TEST(SqliteStore, TheStoreDirectoryIsCreatedPrivateAllTheWayDown) {
  TempDir dir;
  const fs::path file = dir / "a/b/choices.db";
  ASSERT_NE(open_store("sqlite:" + file.string(), {}), nullptr);
  for (const fs::path& d : {dir / "a", dir / "a/b"}) {
    struct stat st {};
    ASSERT_EQ(::stat(d.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
  }
}

// Whatever sits at the path that is not a regular file: a clear message at once, no store,
// nothing created or replaced.
void expect_not_a_file(const fs::path& file, const std::string& kind) {
  Warnings w;
  const auto start = std::chrono::steady_clock::now();
  StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
  EXPECT_LT(seconds_since(start), 3.0) << kind << ": it blocked";
  EXPECT_EQ(opened.store, nullptr) << kind;
  EXPECT_EQ(opened.state, StoreState::not_a_file) << kind << ": " << opened.message;
  ASSERT_EQ(w.seen.size(), 1u) << kind;
  EXPECT_NE(w.seen[0].find(kind), std::string::npos) << w.seen[0];
  EXPECT_NE(w.seen[0].find(file.string()), std::string::npos) << w.seen[0];
}

TEST(SqliteStore, AFifoADeviceLinkOrADirectoryAtThePathIsRefused) {
  TempDir dir;
  fs::create_directories(dir.path());
  const fs::path fifo = dir / "fifo.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_not_a_file(fifo, "a FIFO");
  EXPECT_TRUE(fs::is_fifo(fifo));

  const fs::path device = dir / "device.db";
  fs::create_symlink("/dev/zero", device);
  expect_not_a_file(device, "a symbolic link to a character device");

  fs::create_directories(dir / "directory.db");
  expect_not_a_file(dir / "directory.db", "a directory");

  // A dangling link is not followed to create its target.
  const fs::path dangling = dir / "dangling.db";
  fs::create_symlink(dir / "target.db", dangling);
  expect_not_a_file(dangling, "a symbolic link to nothing");
  EXPECT_FALSE(fs::exists(dir / "target.db"));
}

TEST(SqliteStore, NothingIsCreatedWhenAskedNotTo) {
  TempDir dir;
  StoreOptions options;
  options.create = false;
  Warnings w;
  StoreOpening opened =
      open_store_checked("sqlite:" + (dir / "none/choices.db").string(), options, w.sink());
  EXPECT_EQ(opened.state, StoreState::missing);
  EXPECT_EQ(opened.store, nullptr);
  EXPECT_TRUE(w.seen.empty()) << joined(w.seen);
  EXPECT_FALSE(fs::exists(dir / "none"));
}

// ---------------------------------------------------------------------------------------------
// Stale entries, bans and pending misses (schema 2)

using testing::ban_of;

using testing::miss_of;

std::string schema_version_of(const fs::path& file) {
  sqlite3* db = nullptr;
  std::string version;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "SELECT value FROM tunekit_meta WHERE name = 'schema_version'", -1, &s,
                       nullptr);
    if (s && sqlite3_step(s) == SQLITE_ROW)
      version = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return version;
}

TEST(SqliteStore, AMissRecordedFromAnIdentityFillsEveryField) {
  Identity id;
  id.op = "sum";
  id.key = Key{{"n", 1000}};
  id.device.product = "cpu x";
  id.environment = {{"power", "ac"}};
  const PendingMiss m = make_pending_miss(id);
  EXPECT_EQ(m.identity_digest, id.digest().hex());
  EXPECT_EQ(m.op, "sum");
  EXPECT_EQ(m.key, id.key.text());
  EXPECT_EQ(m.candidates, id.candidates.hex());
  EXPECT_NE(m.device.find("\"product\":\"cpu x\""), std::string::npos) << m.device;
  EXPECT_EQ(m.environment, R"({"power":"ac"})");
  EXPECT_EQ(m.numerics_policy, to_string(id.numerics_policy));
  EXPECT_EQ(m.count, 1);
  EXPECT_GT(m.first_seen, 0);
  EXPECT_EQ(m.first_seen, m.last_seen);
}

// tests/data/store_schema1.db was written by the tunekit before schema 2 (README there).
fs::path copy_of_schema1_fixture(const TempDir& dir) {
  fs::create_directories(dir.path());
  const fs::path file = dir / "choices.db";
  fs::copy_file(fs::path(TUNEKIT_TEST_DATA_DIR) / "store_schema1.db", file);
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  return file;
}

constexpr const char* kFixtureSum = "af63fd24833831bb694013121a2b0979";

TEST(SqliteStore, AStoreOfSchemaOneIsMigratedInPlaceAndKeepsItsEntries) {
  TempDir dir;
  const fs::path file = copy_of_schema1_fixture(dir);
  ASSERT_EQ(schema_version_of(file), "1");
  Warnings w;
  {
    StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
    ASSERT_EQ(opened.state, StoreState::ready) << opened.message;
    Store& store = *opened.store;
    const auto listed = store.list();
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(listed[0].op, "softmax");
    EXPECT_EQ(listed[1].op, "sum");
    const auto sum = store.find(kFixtureSum);
    ASSERT_TRUE(sum.has_value());
    EXPECT_EQ(sum->key, "n=1000,dtype=f32");
    EXPECT_EQ(sum->winner, "blocked_a4_t1");
    EXPECT_TRUE(sum->budget_cut);
    EXPECT_EQ(sum->stale, "") << "an old entry serves";
    // The evidence of schema 1 decodes: every candidate, with its timing.
    ASSERT_FALSE(sum->evidence.empty());
    EXPECT_TRUE(
        std::any_of(sum->evidence.begin(), sum->evidence.end(), [](const CandidateReport& e) {
          return e.name == "blocked_a4_t1" && e.timing.has_value();
        }));
    EXPECT_TRUE(sum->search.has_value());
    EXPECT_EQ(sum->device.backend, "cpu");
    EXPECT_FALSE(sum->toolchain.tunekit_version.empty());
    store.ban(ban_of(kFixtureSum, "blocked_a4_t1", "threw"));
    store.mark_stale(kFixtureSum, "threw live");
    store.record_miss(miss_of("new", "sum", 10));
  }
  EXPECT_EQ(schema_version_of(file), std::to_string(detail::kStoreSchemaVersion));
  auto again = open_store("sqlite:" + file.string(), w.sink());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->find(kFixtureSum)->stale, "threw live");
  EXPECT_EQ(again->bans(kFixtureSum).size(), 1u);
  EXPECT_EQ(again->pending().size(), 1u);
  EXPECT_EQ(again->list().size(), 2u);
  EXPECT_TRUE(w.seen.empty()) << joined(w.seen);
}

// A schema-1 store this user cannot write: served as it is (nothing can migrate it), with no
// bans and no pending misses, and the new kinds of writes warn once like put() does.
TEST(SqliteStore, AReadOnlyStoreOfSchemaOneIsServedUnmigrated) {
  TempDir dir;
  const fs::path file = copy_of_schema1_fixture(dir);
  ::chmod(file.c_str(), 0444);
  const std::string before = bytes_of(file);
  const std::string got = as_user(dir.path(), [&] {
    Warnings w;
    StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
    if (!opened.store) return std::string(to_string(opened.state)) + " " + opened.message;
    Store& store = *opened.store;
    const auto sum = store.find(kFixtureSum);
    std::string out = std::string(to_string(opened.state)) +
                      (sum ? " found:" + sum->winner + " stale:[" + sum->stale + "]" : " none") +
                      " listed:" + std::to_string(store.list().size()) +
                      " bans:" + std::to_string(store.bans().size()) +
                      " pending:" + std::to_string(store.pending().size());
    store.mark_stale(kFixtureSum, "x");
    store.ban(ban_of(kFixtureSum, "c", "r"));
    store.record_miss(miss_of("m", "sum", 1));
    store.remove_pending("m");
    return out + " warnings:" + std::to_string(w.seen.size()) + " " + joined(w.seen);
  });
  EXPECT_EQ(got.rfind("read_only found:blocked_a4_t1 stale:[] listed:2 bans:0 pending:0 "
                      "warnings:1 ",
                      0),
            0u)
      << got;
  EXPECT_EQ(bytes_of(file), before);
}

TEST(SqliteStore, AReadOnlyStoreWarnsOnceOnStaleBanAndMissWrites) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  {
    auto store = open_store("sqlite:" + file.string(), {});
    store->record_miss(miss_of("p", "sum", 5));
    store->ban(ban_of("aaa", "fast", "threw"));
  }
  ::chmod(file.c_str(), 0444);
  const std::string before = bytes_of(file);
  const std::string got = as_user(dir.path(), [&] {
    Warnings w;
    auto store = open_store("sqlite:" + file.string(), w.sink());
    if (!store) return std::string("no store ") + joined(w.seen);
    store->mark_stale("aaa", "x");
    store->ban(ban_of("aaa", "other", "r"));
    store->record_miss(miss_of("q", "sum", 6));
    const std::size_t removed = store->remove_pending("p");
    return "stale:[" + store->find("aaa")->stale +
           "] bans:" + std::to_string(store->bans("aaa").size()) +
           " pending:" + std::to_string(store->pending().size()) +
           " removed:" + std::to_string(removed) + " warnings:" + std::to_string(w.seen.size()) +
           " " + joined(w.seen);
  });
  EXPECT_EQ(got.rfind("stale:[] bans:1 pending:1 removed:0 warnings:1 ", 0), 0u) << got;
  EXPECT_NE(got.find("read-only"), std::string::npos) << got;
  EXPECT_EQ(bytes_of(file), before);
}

// mode cached records misses on its serving path: a locked store costs it the read wait, not
// the (longer) write wait a put() may spend.
TEST(SqliteStore, AMissWaitsForALockOnlyAsLongAsARead) {
  TempDir dir;
  const fs::path file = store_with(dir, "aaa");
  StoreOptions options;
  options.read_wait = milliseconds(50);
  options.write_wait = milliseconds(1000);
  auto for_miss = open_store("sqlite:" + file.string(), {}, options);
  auto for_put = open_store("sqlite:" + file.string(), {}, options);
  ASSERT_NE(for_miss, nullptr);
  ASSERT_NE(for_put, nullptr);
  LockHolder holder(file, /*exclusive_locking=*/false);  // writers wait, readers go on
  auto start = std::chrono::steady_clock::now();
  for_miss->record_miss(miss_of("p", "sum", 1));
  const double miss_seconds = seconds_since(start);
  start = std::chrono::steady_clock::now();
  for_put->put(sample("bbb"));
  const double put_seconds = seconds_since(start);
  EXPECT_LT(miss_seconds * 4, put_seconds) << miss_seconds << " s vs " << put_seconds << " s";
}

}  // namespace
}  // namespace tunekit
