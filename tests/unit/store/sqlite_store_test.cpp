// Tests for src/store/sqlite_store.cpp: round trip, permissions, bad files left untouched.
#include "store/sqlite_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

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

StoredChoice sample(std::string digest, std::string op = "sgemm") {
  StoredChoice c;
  c.identity_digest = std::move(digest);
  c.op = std::move(op);
  c.key = "m=1,n=2";
  c.key_digest = "kd";
  c.device = R"({"product":"x"})";
  c.toolchain = "{}";
  c.environment = "{}";
  c.numerics_policy = "reassociates";
  c.candidates = "cs";
  c.winner = "fast";
  c.winner_config = "mc=64";
  c.evidence = "[]";
  c.budget_cut = true;
  c.created_at = 1700000000;
  c.tunekit_version = "0.1.0";
  return c;
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Warnings {
  std::vector<std::string> seen;
  WarningSink sink() {
    return [this](std::string_view m) { seen.emplace_back(m); };
  }
};

TEST(SqliteStore, RoundTripListRemove) {
  TempDir dir;
  Warnings w;
  auto store = open_store("sqlite:" + (dir / "sub/choices.db").string(), w.sink());
  ASSERT_NE(store, nullptr) << (w.seen.empty() ? "" : w.seen[0]);
  store->put(sample("aaa"));
  store->put(sample("bbb", "softmax"));
  auto got = store->find("aaa");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->winner, "fast");
  EXPECT_EQ(got->winner_config, "mc=64");
  EXPECT_TRUE(got->budget_cut);  // budget_cut is stored and read back
  EXPECT_TRUE(got->measured);
  EXPECT_EQ(got->created_at, 1700000000);
  EXPECT_FALSE(store->find("zzz").has_value());
  EXPECT_EQ(store->list().size(), 2u);
  EXPECT_EQ(store->list("softmax").size(), 1u);
  auto replaced = sample("aaa");
  replaced.winner = "other";
  replaced.budget_cut = false;
  store->put(replaced);
  EXPECT_EQ(store->find("aaa")->winner, "other");
  EXPECT_FALSE(store->find("aaa")->budget_cut);
  EXPECT_EQ(store->remove("softmax"), 1u);
  EXPECT_EQ(store->remove("aaa"), 1u);
  EXPECT_TRUE(store->list().empty());
  EXPECT_TRUE(w.seen.empty());
}

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

}  // namespace
}  // namespace tunekit
