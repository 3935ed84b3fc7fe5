// Tests for src/store/sqlite_leases.cpp and the leases of sqlite_store.cpp: a schema-2 file
// migrated to 3 in place (its entries kept, the leases table added), a read-only file (current
// or older) answering unavailable with the cause, and a lock waited out turning leases
// unavailable with the rest of the store. What every store does with leases is the contract
// suite (store_contract_test.cpp).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "fakes/temp_dir.hpp"
#include "store/sqlite_store.hpp"
#include "tunekit/store.hpp"
#include "unit/store/sqlite_test_support.hpp"
#include "unit/store/store_samples.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::sample;

constexpr milliseconds kTtl{60000};

TuningLease lease_for(const std::string& digest, const std::string& holder) {
  return {digest, "sgemm", "m=1", holder, 0, 0};
}

using testing::Warnings;

// Runs `sql` on the file directly (what the test does around the store); "" or SQLite's error.
std::string raw_sql(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string error;
  if (sqlite3_open(file.c_str(), &db) != SQLITE_OK) error = "open failed";
  char* message = nullptr;
  if (error.empty() && sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK)
    error = message ? message : "exec failed";
  sqlite3_free(message);
  sqlite3_close(db);
  return error;
}

// The answer of a one-value query on the file ("" when there is none).
std::string raw_value(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string value;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
    if (s && sqlite3_step(s) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(s, 0);
      value = text ? reinterpret_cast<const char*>(text) : "";
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return value;
}

constexpr const char* kVersionQuery = "SELECT value FROM tunekit_meta WHERE name='schema_version'";
constexpr const char* kLeasesTableQuery =
    "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='leases'";

// A store of schema 2 as the tunekit before leases wrote it: schema 2 is schema 3 without the
// leases table (the 2 -> 3 migration adds only that), so a schema-3 file loses it and its
// version goes back to 2. It holds an entry, a ban and a pending miss.
fs::path schema2_store(const tunekit::testing::TempDir& dir) {
  const fs::path file = dir / "choices.db";
  {
    auto store = open_store("sqlite:" + file.string(), {});
    EXPECT_NE(store, nullptr);
    store->put(sample("aaa"));
    store->ban(testing::ban_of("aaa", "fast", "threw"));
    store->record_miss(testing::miss_of("p1", "sum", 5));
  }
  EXPECT_EQ(raw_sql(file,
                    "DROP TABLE leases; UPDATE tunekit_meta SET value='2' WHERE "
                    "name='schema_version';"),
            "");
  EXPECT_EQ(raw_value(file, kVersionQuery), "2");
  EXPECT_EQ(raw_value(file, kLeasesTableQuery), "0");
  return file;
}

TEST(SqliteLeases, AStoreOfSchemaTwoIsMigratedToThreeAndKeepsItsEntries) {
  ASSERT_EQ(detail::kStoreSchemaVersion, 3);
  tunekit::testing::TempDir dir;
  const fs::path file = schema2_store(dir);
  Warnings w;
  {
    StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
    ASSERT_EQ(opened.state, StoreState::ready) << opened.message;
    EXPECT_EQ(raw_value(file, kVersionQuery), "3");
    EXPECT_EQ(raw_value(file, kLeasesTableQuery), "1");
    Store& store = *opened.store;
    ASSERT_TRUE(store.find("aaa").has_value());
    EXPECT_EQ(store.find("aaa")->winner, "fast");
    EXPECT_EQ(store.bans("aaa").size(), 1u);
    EXPECT_EQ(store.pending().size(), 1u);
    EXPECT_TRUE(store.leases().empty());
    EXPECT_EQ(store.take_lease(lease_for("aaa", "h1"), kTtl).state, LeaseState::held);
  }
  auto again = open_store("sqlite:" + file.string(), w.sink());
  ASSERT_NE(again, nullptr);
  ASSERT_EQ(again->leases().size(), 1u) << "the lease is in the file";
  EXPECT_EQ(again->leases()[0].holder, "h1");
  EXPECT_EQ(again->list().size(), 1u);
  EXPECT_TRUE(w.seen.empty()) << w.all();
}

// What leases a read-only store at `file` answers, as another user: state, cause, renew, list.
std::string leases_as_reader(const fs::path& dir, const fs::path& file) {
  return tunekit::testing::as_user(dir, [&] {
    Warnings w;
    StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
    if (!opened.store) return std::string("no store: ") + opened.message;
    Store& store = *opened.store;
    const LeaseTaking t = store.take_lease(lease_for("aaa", "reader"), kTtl);
    const bool renewed = store.renew_lease("aaa", "h1", kTtl);
    store.release_lease("aaa", "h1");
    return std::string(to_string(opened.state)) + " " + std::string(to_string(t.state)) +
           " renewed:" + (renewed ? "yes" : "no") +
           " listed:" + std::to_string(store.leases().size()) +
           " clock:" + (store.now_ms() > 0 ? "yes" : "no") + " why:" + t.why +
           " warnings:" + std::to_string(w.seen.size());
  });
}

TEST(SqliteLeases, AReadOnlyStoreAnswersUnavailableWithTheCauseAndStillListsLeases) {
  tunekit::testing::TempDir dir;
  const fs::path file = dir / "choices.db";
  {
    auto store = open_store("sqlite:" + file.string(), {});
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(store->take_lease(lease_for("aaa", "h1"), kTtl).state, LeaseState::held);
  }
  ::chmod(file.c_str(), 0444);
  const std::string got = leases_as_reader(dir.path(), file);
  EXPECT_EQ(got.rfind("read_only unavailable renewed:no listed:1 clock:yes why:the store " +
                          file.string() + " is read-only (not writable by you",
                      0),
            0u)
      << got;
  EXPECT_NE(got.find("warnings:1"), std::string::npos) << "the read-only warning, once: " << got;
  ::chmod(file.c_str(), 0644);
  StoreOptions trusting;
  trusting.trust = true;  // as_user gave the file to the reader
  auto store = open_store("sqlite:" + file.string(), {}, trusting);
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->leases().size(), 1u) << "the reader's release changed nothing";
  EXPECT_EQ(store->leases()[0].holder, "h1");
}

TEST(SqliteLeases, AReadOnlyStoreOfSchemaTwoHasNoLeasesAndIsLeftUnmigrated) {
  tunekit::testing::TempDir dir;
  const fs::path file = schema2_store(dir);
  ::chmod(file.c_str(), 0444);
  const std::string got = leases_as_reader(dir.path(), file);
  EXPECT_EQ(got.rfind("read_only unavailable renewed:no listed:0 clock:yes why:the store " +
                          file.string() + " is read-only",
                      0),
            0u)
      << got;
  EXPECT_EQ(raw_value(file, kVersionQuery), "2");
}

// A lock held past the write wait: the take says so (unavailable, the lock named) for that
// call only; the store is not turned memory-only by a lease (its choices are still stored,
// and a later take, the lock gone, holds).
TEST(SqliteLeases, ALockWaitedOutAnswersUnavailableForThatCallOnly) {
  tunekit::testing::TempDir dir;
  const fs::path file = dir / "choices.db";
  { ASSERT_NE(open_store("sqlite:" + file.string(), {}), nullptr); }
  StoreOptions options;
  options.write_wait = milliseconds(50);
  Warnings w;
  auto store = open_store("sqlite:" + file.string(), w.sink(), options);
  ASSERT_NE(store, nullptr);
  LeaseTaking t;
  bool renewed = true;
  {
    tunekit::testing::LockHolder holder(file, /*exclusive_locking=*/false);
    t = store->take_lease(lease_for("aaa", "h1"), kTtl);
    renewed = store->renew_lease("aaa", "h1", kTtl);
  }
  EXPECT_EQ(t.state, LeaseState::unavailable);
  EXPECT_NE(t.why.find("locked by another process"), std::string::npos) << t.why;
  EXPECT_NE(t.why.find(file.string()), std::string::npos) << t.why;
  EXPECT_FALSE(renewed);
  EXPECT_TRUE(w.seen.empty()) << w.all();
  EXPECT_EQ(store->take_lease(lease_for("aaa", "h1"), kTtl).state, LeaseState::held);
  EXPECT_EQ(open_store("sqlite:" + file.string(), {})->leases().size(), 1u);
}

}  // namespace
}  // namespace tunekit
