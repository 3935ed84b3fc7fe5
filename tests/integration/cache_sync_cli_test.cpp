// End-to-end tests of `tunekit cache push` and `cache pull` (tools/tunekit/commands/
// cache_sync.cpp): the local SQLite store to a PostgreSQL server (TUNEKIT_TEST_POSTGRES_URL;
// scripts/test starts a private one) and back keeps every field, a newer entry is kept unless
// --force, --dry-run changes nothing, a target that keeps nothing exits 1, and the refusals
// (unreachable server, same store, no source) exit as the other cache commands do, never showing a
// password.
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/cli_runner.hpp"
#include "tunekit/store.hpp"
#include "unit/store/store_under_test.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tunekit::testing::CliResult;
using tunekit::testing::contains;
using tunekit::testing::parse_json;

class CacheSyncCli : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }
  CliResult tunekit(const std::string& args, const std::string& env = "") {
    return tunekit::testing::run_cli(args, dir_ / "cache", dir_.path(), env);
  }
  // The default local store (TUNEKIT_CACHE_DIR's choices.db) and another SQLite file.
  std::string local() const { return "sqlite:" + (dir_ / "cache" / "choices.db").string(); }
  std::string other(const std::string& name = "other.db") const {
    return "sqlite:" + (dir_ / name).string();
  }
  std::unique_ptr<tunekit::Store> open(const std::string& spec) {
    return tunekit::open_store(spec, {});
  }

  // The local store: a tuned entry with a ban, a stale entry with a search record and a
  // graph scope, and a pending miss. Returns the identity digests of the two entries.
  std::string fill_local() {
    const CliResult tuned = tunekit("tune sum --shape n=1000 -q --json");
    EXPECT_EQ(tuned.status, 0) << tuned.err;
    const CliResult missed = tunekit("tune sum --shape n=3000 --mode cached -q --json");
    EXPECT_EQ(missed.status, 0) << missed.err;
    auto store = open(local());
    EXPECT_NE(store, nullptr);
    if (!store) return "";
    const std::vector<tunekit::StoredChoice> entries = store->list();
    EXPECT_EQ(entries.size(), 1u);
    if (entries.size() != 1) return "";
    const tunekit::StoredChoice& tuned_entry = entries[0];
    store->ban({tuned_entry.identity_digest, tuned_entry.op, tuned_entry.key, "naive",
                "crashed live", 1700000000});
    tunekit::StoredChoice decision = tuned_entry;
    decision.identity_digest = std::string(32, 'e');
    decision.scope = "graph";
    decision.budget_cut = true;
    decision.search = tunekit::SearchRecord{};
    decision.search->strategy = "genetic";
    decision.search->seed = 7;
    store->put(decision);
    store->mark_stale(decision.identity_digest, "failed re-validation");
    return tuned_entry.identity_digest + " " + decision.identity_digest;
  }

  // `cache show --json` of the entries: every field, with the bans.
  json shown(const std::string& digests, const std::string& store) {
    const CliResult show = tunekit("cache show --json " + digests + " --store '" + store + "'");
    EXPECT_EQ(show.status, 0) << show.err;
    return parse_json(show);
  }

  tunekit::testing::TempDir dir_;
};

TEST_F(CacheSyncCli, PushToAServerThenPullIntoAnotherStoreKeepsEveryField) {
  tunekit::testing::StoreUnderTest server("postgresql");
  if (!server.problem().empty()) FAIL() << server.problem();
  const std::string digests = fill_local();
  ASSERT_FALSE(digests.empty());
  const json before = shown(digests, local());

  const CliResult push = tunekit("cache push --to '" + server.spec() + "'");
  ASSERT_EQ(push.status, 0) << push.err;
  EXPECT_TRUE(contains(push.out, "entries: 2 copied")) << push.out;
  EXPECT_TRUE(contains(push.out, "bans: 1 copied")) << push.out;
  EXPECT_TRUE(contains(push.out, "pending misses: 1 moved")) << push.out;
  EXPECT_EQ(shown(digests, server.spec()), before) << "on the server as they were here";
  const CliResult left = tunekit("cache ls --pending --json");
  EXPECT_EQ(parse_json(left).size(), 0u) << "the pending miss moved: " << left.out;

  const CliResult pull =
      tunekit("cache pull --from '" + server.spec() + "' --store '" + other() + "' --json");
  ASSERT_EQ(pull.status, 0) << pull.err;
  const json summary = parse_json(pull);
  EXPECT_EQ(summary.at("counts").at("copied"), 2) << pull.out;
  EXPECT_EQ(summary.at("pending").at("moved"), 1) << pull.out;
  EXPECT_EQ(shown(digests, other()), before) << "pushed and pulled back, nothing changed";
  const json pending = parse_json(tunekit("cache ls --pending --json --store '" + other() + "'"));
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].at("count"), 1) << "moved, not doubled";

  // Again: nothing to rewrite, no miss counted twice.
  const CliResult again = tunekit("cache push --to '" + server.spec() + "' --json");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(parse_json(again).at("counts").at("unchanged"), 2) << again.out;
}

TEST_F(CacheSyncCli, ANewerEntryInTheTargetIsKeptUnlessForced) {
  const std::string digests = fill_local();
  ASSERT_FALSE(digests.empty());
  ASSERT_EQ(tunekit("cache push --to '" + other() + "'").status, 0);
  const std::string tuned = digests.substr(0, digests.find(' '));
  {
    auto target = open(other());
    ASSERT_NE(target, nullptr);
    tunekit::StoredChoice newer = *target->find(tuned);
    newer.created_at += 3600;
    newer.winner_config = "edited=1";
    target->put(newer);
  }
  const CliResult kept = tunekit("cache push --to '" + other() + "'");
  EXPECT_EQ(kept.status, 0) << "keeping the newer one is no failure: " << kept.err;
  EXPECT_TRUE(contains(kept.out, "kept, newer in target")) << kept.out;
  EXPECT_TRUE(contains(kept.out, "1 kept (newer in target)")) << kept.out;
  EXPECT_EQ(open(other())->find(tuned)->winner_config, "edited=1");

  const CliResult forced = tunekit("cache push --force --to '" + other() + "' --json");
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(parse_json(forced).at("counts").at("replaced"), 1) << forced.out;
  EXPECT_EQ(shown(tuned, other()), shown(tuned, local()));
}

TEST_F(CacheSyncCli, ADryRunChangesNothing) {
  const std::string digests = fill_local();
  ASSERT_FALSE(digests.empty());
  const CliResult fresh = tunekit("cache push --dry-run --to '" + other("new.db") + "'");
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_TRUE(contains(fresh.out, "dry run (nothing written)")) << fresh.out;
  EXPECT_TRUE(contains(fresh.out, "entries: 2 would be copied")) << fresh.out;
  EXPECT_TRUE(contains(fresh.out, "1 would move")) << fresh.out;
  EXPECT_FALSE(fs::exists(dir_ / "new.db")) << "a dry run creates no store";

  ASSERT_EQ(tunekit("cache push --no-pending --to '" + other() + "'").status, 0);
  const std::string listed_before = tunekit("cache ls --json --store '" + other() + "'").out;
  const CliResult dry = tunekit("cache pull --dry-run --force --from '" + other() + "' --json");
  ASSERT_EQ(dry.status, 0) << dry.err;
  EXPECT_TRUE(parse_json(dry).at("dry_run").get<bool>());
  EXPECT_EQ(tunekit("cache ls --json --store '" + other() + "'").out, listed_before);
  EXPECT_EQ(parse_json(tunekit("cache ls --pending --json")).size(), 1u)
      << "--no-pending left the miss, the dry run did not move it";
}

TEST_F(CacheSyncCli, AnUnreachableServerIsNamedWithItsPasswordMasked) {
  ASSERT_FALSE(fill_local().empty());
  const std::string url = "postgresql://me:pa55word@127.0.0.1:1/db";
  const CliResult push = tunekit("cache push --to '" + url + "'");
  EXPECT_EQ(push.status, 10) << push.err;  // as `cache ls` exits for it
  EXPECT_TRUE(contains(push.err, "postgresql://me:***@127.0.0.1:1/db")) << push.err;
  EXPECT_TRUE(contains(push.err, "unreachable")) << push.err;
  EXPECT_TRUE(contains(push.err, "check that the server runs")) << push.err;
  const CliResult pull = tunekit("cache pull --from '" + url + "'");
  EXPECT_EQ(pull.status, 10) << pull.err;
  for (const CliResult* run : {&push, &pull})
    EXPECT_FALSE(contains(run->out + run->err, "pa55word")) << run->out << run->err;
  EXPECT_EQ(parse_json(tunekit("cache ls --pending --json")).size(), 1u) << "nothing moved";
}

TEST_F(CacheSyncCli, TheSameStoreOnBothSidesAndAMissingSourceAreRefused) {
  ASSERT_FALSE(fill_local().empty());
  const CliResult same = tunekit("cache push --to '" + local() + "'");
  EXPECT_EQ(same.status, 2) << same.err;
  EXPECT_TRUE(contains(same.err, "name the same store")) << same.err;
  fs::create_symlink(dir_ / "cache" / "choices.db", dir_ / "link.db");
  const CliResult linked = tunekit("cache pull --from '" + other("link.db") + "'");
  EXPECT_EQ(linked.status, 2) << "through a link too: " << linked.err;
  EXPECT_TRUE(contains(linked.err, "name the same store")) << linked.err;

  const CliResult missing =
      tunekit("cache pull --from '" + other("absent.db") + "' --to '" + other() + "'");
  EXPECT_EQ(missing.status, 2) << missing.err;
  EXPECT_TRUE(contains(missing.err, "there is no store at")) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "absent.db"));
  const CliResult none = tunekit("cache push --to none");
  EXPECT_EQ(none.status, 2) << none.err;
  EXPECT_TRUE(contains(none.err, "persistent stores")) << none.err;
}

TEST_F(CacheSyncCli, WhatALockedTargetDidNotKeepExitsOneAndTheMissStays) {
  ASSERT_FALSE(fill_local().empty());
  ASSERT_NE(open(other()), nullptr);  // the target exists
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "other.db").c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  const CliResult push =
      tunekit("cache push --to '" + other() + "' --json", "TUNEKIT_STORE_WAIT_MS=0,0");
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_EQ(push.status, 1) << push.err;
  const json summary = parse_json(push);
  EXPECT_FALSE(summary.value("complete", true)) << push.out;
  EXPECT_EQ(summary.at("counts").at("failed"), 2) << push.out;
  EXPECT_TRUE(contains(push.err, "lock")) << "the store's warning says why: " << push.err;
  EXPECT_EQ(parse_json(tunekit("cache ls --pending --json")).size(), 1u)
      << "a miss the target did not take stays here";
}

}  // namespace
