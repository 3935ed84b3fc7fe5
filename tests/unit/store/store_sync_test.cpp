// Tests for src/store/store_sync.cpp (sync_store, plan_sync_into_new, same_store) between
// two SQLite stores and between SQLite and PostgreSQL either way (TUNEKIT_TEST_POSTGRES_URL;
// scripts/test starts a private server; without it the PostgreSQL pairs fail, never skip).
#include "tunekit/store_sync.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "store/store_rows.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"
#include "unit/store/store_samples.hpp"
#include "unit/store/store_under_test.hpp"

namespace tunekit {
namespace {

using testing::ban_of;
using testing::miss_of;
using testing::sample;

// An entry with every field the stores keep filled in: evidence with a reading and a
// failure, a search record, a scope, identity parts in clear.
StoredChoice rich_choice(std::string digest, std::string op = "sgemm") {
  StoredChoice c = sample(std::move(digest), std::move(op));
  c.device.backend = "cpu";
  c.device.compute_units = 16;
  c.toolchain.compiler = "gcc 12";
  c.environment = {{"power", "ac"}};
  c.scope = "graph";
  CandidateReport fast;
  fast.name = "fast";
  fast.winner = true;
  fast.timing = TimingResult{};
  fast.timing->median = 1.5e-3;
  fast.timing->samples = std::vector<double>(17, 1.5e-3);
  CandidateReport broken;
  broken.name = "broken";
  broken.outcome = {Status::validation_failed, "max error 0.5 > 1e-5"};
  c.evidence = {fast, broken};
  SearchRecord search;
  search.strategy = "genetic";
  search.seed = 7;
  search.evaluated = 2;
  search.budget.cut = true;
  c.search = search;
  return c;
}

// Every stored field of an entry, as the stores write them.
std::string stored_row_of(const StoredChoice& c) {
  std::string row;
  for (const std::string& t : detail::choice_texts(c)) row += t + "\x1f";
  return row + std::to_string(c.measured) + std::to_string(c.budget_cut) +
         std::to_string(c.created_at) + c.tunekit_version + "\x1f" + c.stale;
}

std::map<std::string, std::string> stored_rows_of(Store& store) {
  std::map<std::string, std::string> rows;
  for (const StoredChoice& c : store.list()) rows[c.identity_digest] = stored_row_of(c);
  return rows;
}

std::map<std::string, std::int64_t> pending_counts_in(Store& store) {
  std::map<std::string, std::int64_t> counts;
  for (const PendingMiss& m : store.pending()) counts[m.identity_digest] = m.count;
  return counts;
}

// "sqlite>postgresql": the source's kind, then the target's.
class StoreSync : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const auto* side : {&from_, &to_})
      if (!side->problem().empty()) FAIL() << side->problem();
    source_ = open_store(from_.spec(), warn_sink());
    target_ = open_store(to_.spec(), warn_sink());
    ASSERT_NE(source_, nullptr) << warnings_;
    ASSERT_NE(target_, nullptr) << warnings_;
  }
  static std::string kind(bool source) {
    const std::string pair = GetParam();
    const std::size_t arrow = pair.find('>');
    return source ? pair.substr(0, arrow) : pair.substr(arrow + 1);
  }
  WarningSink warn_sink() {
    return [this](std::string_view m) { warnings_ += std::string(m) + "\n"; };
  }
  StoreSyncSummary sync(const StoreSyncOptions& options = {}) {
    return sync_store(*source_, *target_, options);
  }

  testing::StoreUnderTest from_{kind(true)};
  testing::StoreUnderTest to_{kind(false)};
  std::string warnings_;
  std::unique_ptr<Store> source_;
  std::unique_ptr<Store> target_;
};

TEST_P(StoreSync, EveryFieldOfEveryEntryBansAndPendingMissesArrive) {
  source_->put(rich_choice("aaa111"));
  source_->put(sample("bbb222", "softmax"));
  source_->mark_stale("bbb222", "failed re-validation");
  source_->ban(ban_of("aaa111", "slow", "crashed"));
  PendingMiss miss = miss_of("ccc333", "sum", 1700000100);
  miss.count = 4;
  source_->record_miss(miss);

  const StoreSyncSummary s = sync();
  EXPECT_TRUE(s.complete()) << warnings_;
  EXPECT_EQ(s.count(SyncAction::copied), 2u);
  EXPECT_EQ(s.bans_copied, 1u);
  EXPECT_EQ(s.pending_moved, 1u);
  EXPECT_EQ(s.misses_moved, 4);
  EXPECT_EQ(stored_rows_of(*target_), stored_rows_of(*source_))
      << "every field, the stale mark included";
  EXPECT_EQ(target_->find("bbb222")->stale, "failed re-validation");
  EXPECT_EQ(target_->find("aaa111")->scope, "graph");
  ASSERT_EQ(target_->bans("aaa111").size(), 1u);
  EXPECT_EQ(target_->bans("aaa111")[0].reason, "crashed");
  EXPECT_EQ(pending_counts_in(*target_), (std::map<std::string, std::int64_t>{{"ccc333", 4}}));
  EXPECT_TRUE(source_->pending().empty()) << "a pending miss moves";
  EXPECT_EQ(s.from, source_->describe());
  EXPECT_TRUE(warnings_.empty()) << warnings_;
}

TEST_P(StoreSync, ASecondCopyRewritesNothingAndCountsNoMissTwice) {
  source_->put(rich_choice("aaa111"));
  source_->ban(ban_of("aaa111", "slow", "crashed"));
  PendingMiss miss = miss_of("ccc333", "sum", 1700000100);
  miss.count = 3;
  source_->record_miss(miss);
  ASSERT_TRUE(sync().complete()) << warnings_;
  const StoreSyncSummary again = sync();
  EXPECT_TRUE(again.complete());
  EXPECT_EQ(again.count(SyncAction::unchanged), 1u);
  EXPECT_EQ(again.count(SyncAction::copied) + again.count(SyncAction::replaced), 0u);
  EXPECT_EQ(again.bans_present, 1u);
  EXPECT_EQ(again.bans_copied, 0u);
  EXPECT_EQ(again.pending_moved, 0u);
  EXPECT_EQ(pending_counts_in(*target_).at("ccc333"), 3) << "not doubled";
}

TEST_P(StoreSync, PendingCountsAddToTheTargetsOwn) {
  PendingMiss there = miss_of("ccc333", "sum", 1700000100);
  there.count = 2;
  target_->record_miss(there);
  PendingMiss here = there;
  here.count = 5;
  source_->record_miss(here);
  const StoreSyncSummary s = sync();
  EXPECT_EQ(s.pending_moved, 1u);
  EXPECT_EQ(pending_counts_in(*target_).at("ccc333"), 7);
  EXPECT_TRUE(source_->pending().empty());
}

TEST_P(StoreSync, ANewerTargetEntryIsKeptUnlessForced) {
  StoredChoice older = rich_choice("aaa111");
  StoredChoice newer = older;
  newer.winner = "other";
  newer.created_at = older.created_at + 60;
  source_->put(older);
  target_->put(newer);
  const StoreSyncSummary kept = sync();
  ASSERT_EQ(kept.entries.size(), 1u);
  EXPECT_EQ(kept.entries[0].action, SyncAction::kept_newer);
  EXPECT_EQ(kept.entries[0].target_created_at, newer.created_at);
  EXPECT_TRUE(kept.complete()) << "keeping the newer one is no failure";
  EXPECT_EQ(target_->find("aaa111")->winner, "other");

  StoreSyncOptions force;
  force.force = true;
  EXPECT_EQ(sync(force).entries[0].action, SyncAction::replaced);
  EXPECT_EQ(target_->find("aaa111")->winner, "fast");
  // An older target entry is replaced without --force.
  source_->put(newer);
  target_->put(older);
  EXPECT_EQ(sync().entries[0].action, SyncAction::replaced);
  EXPECT_EQ(target_->find("aaa111")->winner, "other");
}

TEST_P(StoreSync, AStaleMarkTravelsAndIsNotClearedByTheSameMeasurement) {
  source_->put(rich_choice("aaa111"));
  target_->put(rich_choice("aaa111"));
  source_->mark_stale("aaa111", "failed live");
  EXPECT_EQ(sync().entries[0].action, SyncAction::replaced);
  EXPECT_EQ(target_->find("aaa111")->stale, "failed live");
  EXPECT_EQ(target_->find("aaa111")->winner, "fast");

  // The other way: the target marked the same measurement stale; the source's copy without
  // the mark does not clear it, --force does.
  source_->put(rich_choice("aaa111"));
  EXPECT_EQ(sync().entries[0].action, SyncAction::kept_stale);
  EXPECT_EQ(target_->find("aaa111")->stale, "failed live");
  StoreSyncOptions force;
  force.force = true;
  EXPECT_EQ(sync(force).entries[0].action, SyncAction::replaced);
  EXPECT_EQ(target_->find("aaa111")->stale, "");
}

TEST_P(StoreSync, ADryRunSaysWhatWouldHappenAndWritesNothing) {
  source_->put(rich_choice("aaa111"));
  source_->ban(ban_of("aaa111", "slow", "crashed"));
  source_->record_miss(miss_of("ccc333", "sum", 1700000100));
  StoredChoice newer = sample("bbb222", "softmax");
  newer.created_at += 60;
  source_->put(sample("bbb222", "softmax"));
  target_->put(newer);
  const auto target_before = stored_rows_of(*target_);
  const auto source_before = stored_rows_of(*source_);
  StoreSyncOptions dry;
  dry.dry_run = true;
  const StoreSyncSummary s = sync(dry);
  EXPECT_TRUE(s.dry_run);
  EXPECT_EQ(s.count(SyncAction::copied), 1u);
  EXPECT_EQ(s.count(SyncAction::kept_newer), 1u);
  EXPECT_EQ(s.bans_copied, 1u);
  EXPECT_EQ(s.pending_moved, 1u);
  EXPECT_EQ(stored_rows_of(*target_), target_before);
  EXPECT_EQ(stored_rows_of(*source_), source_before);
  EXPECT_TRUE(target_->bans().empty());
  EXPECT_TRUE(target_->pending().empty());
  EXPECT_EQ(source_->pending().size(), 1u);
  // Into a store not created yet: everything would be copied.
  const StoreSyncSummary fresh = plan_sync_into_new(*source_, {});
  EXPECT_TRUE(fresh.dry_run);
  EXPECT_EQ(fresh.count(SyncAction::copied), 2u);
  EXPECT_EQ(source_->pending().size(), 1u);
}

TEST_P(StoreSync, OpAndKeyOrDigestFiltersSelectEntriesWithTheirBansAndMisses) {
  source_->put(rich_choice("aaa111"));
  source_->put(sample("bbb222", "softmax"));
  source_->ban(ban_of("aaa111", "slow", "crashed"));
  source_->record_miss(miss_of("ccc333", "sum", 5));
  StoreSyncOptions by_op;
  by_op.op = "softmax";
  StoreSyncSummary s = sync(by_op);
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_EQ(s.entries[0].identity_digest, "bbb222");
  EXPECT_EQ(s.bans_copied, 0u) << "the ban is sgemm's";
  EXPECT_EQ(s.pending_moved, 0u) << "the miss is sum's";

  StoreSyncOptions by_digest;
  by_digest.what = {"aaa111"};
  s = sync(by_digest);
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_EQ(s.entries[0].identity_digest, "aaa111");
  EXPECT_EQ(s.bans_copied, 1u) << "an entry's bans go with it";

  StoreSyncOptions by_key;
  by_key.what = {"n=5"};  // the pending miss's key
  s = sync(by_key);
  EXPECT_TRUE(s.entries.empty());
  EXPECT_EQ(s.pending_moved, 1u);

  StoreSyncOptions unknown;
  unknown.what = {"n=999"};
  try {
    sync(unknown);
    FAIL() << "a word that names nothing is an error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'n=999'"), std::string::npos) << e.what();
  }
}

TEST_P(StoreSync, PendingMissesStayInASourceThatCannotForgetThem) {
  source_->record_miss(miss_of("ccc333", "sum", 5));
  StoreSyncOptions read_only;
  read_only.source_read_only = "the file is not writable";
  const StoreSyncSummary s = sync(read_only);
  EXPECT_EQ(s.pending_left, 1u);
  EXPECT_NE(s.pending_left_why.find("not writable"), std::string::npos) << s.pending_left_why;
  EXPECT_TRUE(target_->pending().empty());
  StoreSyncOptions none;
  none.pending = false;
  EXPECT_EQ(sync(none).pending_left, 1u);
  EXPECT_EQ(source_->pending().size(), 1u);
}

TEST_P(StoreSync, OneStoreOnBothSidesIsRefused) {
  EXPECT_THROW(sync_store(*source_, *source_, {}), UsageError);
  auto again = open_store(from_.spec(), {});
  ASSERT_NE(again, nullptr);
  EXPECT_THROW(sync_store(*source_, *again, {}), UsageError) << "the same store, opened twice";
}

INSTANTIATE_TEST_SUITE_P(Pairs, StoreSync,
                         ::testing::Values("sqlite>sqlite", "sqlite>postgresql",
                                           "postgresql>sqlite"),
                         [](const ::testing::TestParamInfo<std::string>& pair) {
                           std::string name = pair.param;
                           name.replace(name.find('>'), 1, "_to_");
                           return name;
                         });

// A target that cannot be written (another process holds its write lock past the wait) keeps
// nothing: the entry is failed, the pending miss stays in the source, complete() says so.
TEST(StoreSyncFailures, WhatTheTargetDidNotKeepIsFailedAndTheMissStaysInTheSource) {
  testing::StoreUnderTest from("sqlite"), to("sqlite");
  auto source = open_store(from.spec(), {});
  ASSERT_NE(source, nullptr);
  source->put(rich_choice("aaa111"));
  source->record_miss(miss_of("ccc333", "sum", 5));
  std::string warnings;
  StoreOptions no_wait;
  no_wait.read_wait = no_wait.write_wait = std::chrono::milliseconds(0);
  auto target = open_store(
      to.spec(), [&](std::string_view m) { warnings += std::string(m) + "\n"; }, no_wait);
  ASSERT_NE(target, nullptr);
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(store_file_of(to.spec()).c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  const StoreSyncSummary s = sync_store(*source, *target, {});
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_FALSE(s.complete());
  ASSERT_EQ(s.entries.size(), 1u);
  EXPECT_EQ(s.entries[0].action, SyncAction::failed);
  EXPECT_EQ(s.pending_failed, 1u);
  EXPECT_EQ(s.pending_moved, 0u);
  EXPECT_EQ(source->pending().size(), 1u) << "a miss the target did not take stays";
  EXPECT_NE(warnings.find("lock"), std::string::npos) << warnings;
}

TEST(SameStore, OneFileThroughAnotherPathOrALink) {
  testing::StoreUnderTest a("sqlite");
  const std::string file = store_file_of(a.spec());
  ASSERT_NE(open_store(a.spec(), {}), nullptr);  // creates it
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  std::filesystem::create_symlink(file, dir / "link.db");
  EXPECT_TRUE(same_store(a.spec(), "sqlite:" + (dir / "link.db").string()));
  EXPECT_TRUE(same_store(a.spec(), "sqlite:" + (dir / "." / "choices.db").string()));
  EXPECT_FALSE(same_store(a.spec(), "sqlite:" + (dir / "other.db").string()));
  EXPECT_TRUE(same_store("sqlite:" + (dir / "new.db").string(),
                         "sqlite:" + (dir / ".." / dir.filename() / "new.db").string()))
      << "a file not created yet, by two paths";
  EXPECT_FALSE(same_store(a.spec(), "postgresql://localhost/db"));
  EXPECT_FALSE(same_store("none", "memory"));
}

TEST(SameStore, OneServerDatabaseAndSchemaHoweverTheURLSaysIt) {
  EXPECT_TRUE(same_store("postgresql://u@localhost/db", "postgres://v:secret@127.0.0.1:5432/db"));
  EXPECT_TRUE(same_store("postgresql://u@localhost/db?tunekit_schema=ci",
                         "postgresql://u@[::1]:5432/db?tunekit_schema=ci&sslmode=disable"));
  EXPECT_FALSE(
      same_store("postgresql://u@localhost/db?tunekit_schema=ci", "postgresql://u@localhost/db"))
      << "another schema is another store";
  EXPECT_FALSE(same_store("postgresql://u@localhost/db", "postgresql://u@localhost:5433/db"));
  EXPECT_FALSE(same_store("postgresql://u@localhost/db", "postgresql://u@localhost/other"));
  EXPECT_FALSE(same_store("postgresql://u@db.example/db", "postgresql://u@localhost/db"));
  EXPECT_THROW(same_store("postgresql://u@localhost/db?tunekit_schema=Bad-Name",
                          "postgresql://u@localhost/db"),
               UsageError);
}

}  // namespace
}  // namespace tunekit
