// Tests for src/store/sqlite_probe.cpp and the path checks of store_path_check.cpp: what
// opening a store file finds there (a FIFO, a device, a link, a directory, a text file, a
// truncated, corrupt, foreign or newer database), who owns it and its directory, nothing
// created when asked not to, and the migration of a schema-1 file.
#include "store/sqlite_probe.hpp"

#include "store/sqlite_store.hpp"  // kStoreSchemaVersion

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
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
using testing::miss_of;
using testing::sample;
using testing::seconds_since;
using testing::store_with;
using testing::StoreDir;
using testing::Warnings;

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
  StoreDir dir;
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

// The one warning of opening `file` when it is refused as untrusted ("" when it was not).
std::string untrusted_warning(const fs::path& file) {
  Warnings w;
  StoreOpening opened = open_store_checked("sqlite:" + file.string(), StoreOptions{}, w.sink());
  EXPECT_EQ(opened.store, nullptr);
  EXPECT_EQ(opened.state, StoreState::untrusted);
  EXPECT_EQ(w.seen.size(), 1u) << joined(w.seen);
  return w.seen.size() == 1 ? w.seen[0] : "";
}

std::unique_ptr<Store> open_trusting(const fs::path& file) {
  StoreOptions trusting;
  trusting.trust = true;
  return open_store("sqlite:" + file.string(), {}, trusting);
}

TEST(SqliteStore, AStoreInADirectoryOthersCanWriteIsRefusedUnlessTrusted) {
  StoreDir dir;
  const fs::path file = store_with(dir, "aaa");
  ::chmod(dir.path().c_str(), 0777);
  const std::string before = bytes_of(file);
  const std::string warning = untrusted_warning(file);
  EXPECT_NE(warning.find("writable by others"), std::string::npos) << warning;
  EXPECT_NE(warning.find("TUNEKIT_TRUST_STORE=1"), std::string::npos) << warning;
  EXPECT_EQ(bytes_of(file), before);
  // Nothing is created there either.
  EXPECT_EQ(open_store("sqlite:" + (dir / "new.db").string(), {}), nullptr);
  EXPECT_FALSE(fs::exists(dir / "new.db"));

  auto store = open_trusting(file);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->find("aaa").has_value());
  ::chmod(dir.path().c_str(), 0700);
}

TEST(SqliteStore, AStoreFileAnotherUserOwnsIsRefusedUnlessTrusted) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  StoreDir dir;
  const fs::path file = store_with(dir, "aaa");
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  const std::string warning = untrusted_warning(file);
  EXPECT_NE(warning.find("owned by another user"), std::string::npos) << warning;
  auto store = open_trusting(file);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->find("aaa")->winner, "fast");
}

TEST(SqliteStore, TheStoreDirectoryIsCreatedPrivateAllTheWayDown) {
  StoreDir dir;
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
  StoreDir dir;
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
  StoreDir dir;
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

// tests/data/store_schema1.db was written by the tunekit before schema 2 (README there).
fs::path copy_of_schema1_fixture(const StoreDir& dir) {
  fs::create_directories(dir.path());
  const fs::path file = dir / "choices.db";
  fs::copy_file(fs::path(TUNEKIT_TEST_DATA_DIR) / "store_schema1.db", file);
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  return file;
}

constexpr const char* kFixtureSum = "af63fd24833831bb694013121a2b0979";

TEST(SqliteStore, AStoreOfSchemaOneIsMigratedInPlaceAndKeepsItsEntries) {
  StoreDir dir;
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
  StoreDir dir;
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

}  // namespace
}  // namespace tunekit
