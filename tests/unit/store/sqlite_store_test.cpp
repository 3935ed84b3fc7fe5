// Tests for src/store/sqlite_store.cpp: permissions and reopening, locked and read-only
// stores, misses. Opening a file (what sits at the path, who owns it, bad files left
// untouched, the schema-1 migration) is sqlite_probe_test.cpp; what every store does (round
// trip, stale entries, bans, pending misses, concurrent writers) is the contract suite,
// store_contract_test.cpp.
#include "store/sqlite_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
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
using testing::ban_of;
using testing::bytes_of;
using testing::joined;
using testing::LockHolder;
using testing::miss_of;
using testing::sample;
using testing::seconds_since;
using testing::store_with;
using testing::StoreDir;
using testing::Warnings;

TEST(SqliteStore, PermissionsAndReopen) {
  StoreDir dir;
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

TEST(SqliteStore, AStoreAnotherProcessWritesIsStillReadAtOnce) {
  StoreDir dir;
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
  StoreDir dir;
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
  StoreDir dir;
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
  StoreDir dir;
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
  StoreDir dir;
  const fs::path file = store_with(dir, "aaa");
  ::chmod(file.c_str(), 0444);
  const std::string before = bytes_of(file);
  const std::string got = as_user(dir.path(), [&] { return serve_and_put(file); });
  EXPECT_EQ(got.rfind("read_only found:fast listed:1 warnings:1 ", 0), 0u) << got;
  EXPECT_NE(got.find("read-only (not writable by you"), std::string::npos) << got;
  EXPECT_EQ(bytes_of(file), before);
}

TEST(SqliteStore, AStoreInADirectoryYouCannotWriteIsServedReadOnly) {
  StoreDir dir;
  const fs::path file = store_with(dir, "aaa");  // closed: no -wal left behind
  ASSERT_FALSE(fs::exists(file.string() + "-wal"));
  ::chmod(dir.path().c_str(), 0555);
  const std::string got = as_user(dir.path(), [&] { return serve_and_put(file); });
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_EQ(got.rfind("read_only found:fast listed:1 warnings:1 ", 0), 0u) << got;
  EXPECT_NE(got.find("directory not writable by you"), std::string::npos) << got;
}

TEST(SqliteStore, AFileYouCannotReadIsReportedAsUnreadable) {
  StoreDir dir;
  const fs::path file = store_with(dir, "aaa");
  ::chmod(file.c_str(), 0000);
  const std::string got = as_user(dir.path(), [&] { return serve_and_put(file); });
  EXPECT_EQ(got.rfind("unreadable ", 0), 0u) << got;
  EXPECT_NE(got.find("not readable by you"), std::string::npos) << got;
}

// A read-only store in rollback-journal mode, locked by its writer while this session reads
// it: the read waits read_wait, says so once, and the store is memory-only from then on.
TEST(SqliteStore, ALockWaitedOutWhileReadingTurnsTheStoreMemoryOnlyOnce) {
  StoreDir dir;
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

TEST(SqliteStore, AReadOnlyStoreWarnsOnceOnStaleBanAndMissWrites) {
  StoreDir dir;
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
  StoreDir dir;
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
