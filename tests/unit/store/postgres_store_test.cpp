// Tests for src/store/postgres_store.cpp, pg_schema.cpp and pg_session.cpp against a real
// server (TUNEKIT_TEST_POSTGRES_URL; scripts/test starts a private cluster): the schema made
// once under concurrent openers, a newer or foreign schema refused and left alone, an
// unreachable server named with its password masked, a terminated backend reconnected, a
// server gone mid-run (choices kept, written when it is back; also under a Tuner), a
// read-only role, a refused write; leases for a read-only role, with the server gone (its
// password masked), and a schema-1 server migrated by a writer but served as it is to a reader.
// What every store does is the contract suite (store_contract_test.cpp).
#include "store/postgres_store.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "fakes/fake_device.hpp"
#include "store/pg_schema.hpp"
#include "store/pg_session.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"
#include "unit/store/store_samples.hpp"
#include "unit/store/store_under_test.hpp"

namespace tunekit {
namespace {

using testing::postgres_admin;
using testing::with_parameter;

StoredChoice sample(std::string digest) {
  StoredChoice c;
  c.identity_digest = std::move(digest);
  c.op = "sgemm";
  c.key = "m=1,n=2";
  c.key_digest = "kd";
  c.device.product = "x";
  c.numerics_policy = "bitwise";
  c.candidates = "cs";
  c.winner = "fast";
  c.winner_config = "mc=64";
  c.created_at = 1700000000;
  c.tunekit_version = "0.2.0";
  return c;
}

using testing::Warnings;

class PostgresStore : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!under_test_.problem().empty()) FAIL() << under_test_.problem();
  }
  const std::string& spec() const { return under_test_.spec(); }
  const std::string& schema() const { return under_test_.schema(); }
  // The stored schema version, as the server has it ("" when there is none).
  std::string version_on_server() {
    try {
      auto rows = postgres_admin()->run("SELECT value FROM " + detail::pg_table(schema(), "meta") +
                                        " WHERE name = 'schema_version'");
      return rows.size() > 0 ? rows.row(0).text(0) : "";
    } catch (const detail::PgError&) {
      return "";
    }
  }
  // A login role of this test, dropped with everything it owns at the end.
  std::string make_role() {
    role_ = testing::unique_name("r_");
    auto admin = postgres_admin();
    admin->run("CREATE ROLE \"" + role_ + "\" LOGIN");
    changing_database_acl(*admin, "GRANT CREATE ON DATABASE postgres TO \"" + role_ + "\"");
    return role_;
  }
  void TearDown() override {
    if (role_.empty()) return;
    auto admin = postgres_admin();
    admin->run("DROP SCHEMA IF EXISTS \"" + schema() + "\" CASCADE");
    changing_database_acl(*admin, "DROP OWNED BY \"" + role_ + "\"");
    admin->run("DROP ROLE \"" + role_ + "\"");
  }
  // GRANT ON DATABASE and DROP OWNED rewrite the one pg_database row: two tests doing it at once
  // fail with "tuple concurrently updated", so they take turns under an advisory lock.
  static void changing_database_acl(detail::PgSession& admin, const std::string& statement) {
    detail::in_pg_transaction(admin, [&] {
      admin.run("SELECT pg_advisory_xact_lock(7317001)");
      admin.run(statement);
      return 0;
    });
  }

 private:
  testing::StoreUnderTest under_test_{"postgresql"};
  std::string role_;
};

TEST_F(PostgresStore, ProcessesCreatingTheSchemaAtOnceAllGetOneStore) {
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      StoreOpening o = open_store_checked(spec(), StoreOptions{}, {});
      if (o.state != StoreState::ready) ::_exit(3);
      o.store->put(sample("from" + std::to_string(p)));
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  EXPECT_EQ(version_on_server(), std::to_string(detail::kPgSchemaVersion));
  EXPECT_EQ(open_store(spec(), {})->list().size(), 4u);
}

TEST_F(PostgresStore, ANewerSchemaIsRefusedAndLeftAsItIs) {
  { ASSERT_NE(open_store(spec(), {}), nullptr); }
  postgres_admin()->run("UPDATE " + detail::pg_table(schema(), "meta") +
                        " SET value = '99' WHERE name = 'schema_version'");
  Warnings w;
  StoreOpening o = open_store_checked(spec(), StoreOptions{}, w.sink());
  EXPECT_EQ(o.state, StoreState::newer_schema);
  EXPECT_EQ(o.store, nullptr);
  ASSERT_EQ(w.seen.size(), 1u) << w.all();
  EXPECT_NE(w.seen[0].find("newer"), std::string::npos) << w.seen[0];
  EXPECT_NE(w.seen[0].find(shown_store_spec(spec())), std::string::npos) << w.seen[0];
  EXPECT_EQ(version_on_server(), "99");
}

TEST_F(PostgresStore, ASchemaOfAnotherApplicationIsNotAStore) {
  auto admin = postgres_admin();
  admin->run("CREATE SCHEMA \"" + schema() + "\"");
  admin->run("CREATE TABLE " + detail::pg_table(schema(), "meta") + "(name TEXT, value TEXT)");
  Warnings w;
  StoreOpening o = open_store_checked(spec(), StoreOptions{}, w.sink());
  EXPECT_EQ(o.state, StoreState::not_a_store) << o.message;
  EXPECT_EQ(o.store, nullptr);
  auto tables = admin->run("SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
                           {schema()});
  EXPECT_EQ(tables.row(0).text(0), "1") << "nothing was added to it";
}

TEST_F(PostgresStore, NothingIsCreatedWhenAskedNotTo) {
  StoreOptions options;
  options.create = false;
  Warnings w;
  StoreOpening o = open_store_checked(spec(), options, w.sink());
  EXPECT_EQ(o.state, StoreState::missing);
  EXPECT_EQ(o.store, nullptr);
  EXPECT_TRUE(w.seen.empty()) << w.all();
  auto schemas = postgres_admin()->run(
      "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", {schema()});
  EXPECT_EQ(schemas.row(0).text(0), "0");
}

TEST_F(PostgresStore, AnUnreachableServerIsNamedWithItsPasswordMasked) {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  const std::string url = "postgresql://someone:s3cret@127.0.0.1:1/db?connect_timeout=2";
  Warnings w;
  StoreOpening o = open_store_checked(url, StoreOptions{}, w.sink());
  EXPECT_EQ(o.state, StoreState::unreachable) << o.message;
  EXPECT_EQ(o.store, nullptr);
  ASSERT_EQ(w.seen.size(), 1u) << w.all();
  EXPECT_NE(w.seen[0].find("postgresql://someone:***@127.0.0.1:1/db"), std::string::npos)
      << w.seen[0];
  EXPECT_EQ(w.seen[0].find("s3cret"), std::string::npos) << w.seen[0];
  EXPECT_EQ(to_string(o.state), "unreachable");
}

// A backend terminated under the store (a server restart, an idle timeout, an administrator):
// the next operation connects again and nothing is lost or warned about.
TEST_F(PostgresStore, ATerminatedBackendIsReconnectedAndNoWriteIsLost) {
  const std::string app = testing::unique_name("tk_");
  Warnings w;
  auto store = open_store(with_parameter(spec(), "application_name=" + app), w.sink());
  ASSERT_NE(store, nullptr) << w.all();
  store->put(sample("before"));
  auto killed = postgres_admin()->run(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", {app});
  ASSERT_EQ(killed.size(), 1);
  store->put(sample("after"));
  EXPECT_TRUE(store->find("before").has_value());
  EXPECT_TRUE(store->find("after").has_value());
  EXPECT_TRUE(w.seen.empty()) << w.all();
}

// The server refuses this role's connections and its backend is terminated: tuning goes on
// memory-only with one warning naming the server; stale marks, bans, misses and choices made
// meanwhile are kept and written, in order, by the next write once it is back.
TEST_F(PostgresStore, AServerGoneMidRunKeepsItsWritesAndWritesThemWhenBack) {
  const std::string role = make_role();
  Warnings w;
  auto store = open_store(with_parameter(spec(), "user=" + role), w.sink());
  ASSERT_NE(store, nullptr) << w.all();
  store->put(sample("a"));
  auto admin = postgres_admin();
  auto shut_out = [&](bool out) {
    admin->run("ALTER ROLE \"" + role + "\" " + (out ? "NOLOGIN" : "LOGIN"));
    if (out)
      admin->run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1",
                 {role});
  };
  shut_out(true);
  store->put(sample("b"));
  ASSERT_EQ(w.seen.size(), 1u) << w.all();
  EXPECT_NE(w.seen[0].find("cannot be reached"), std::string::npos) << w.seen[0];
  EXPECT_NE(w.seen[0].find(shown_store_spec(spec())), std::string::npos) << w.seen[0];
  store->mark_stale("a", "failed live");
  store->ban({"a", "sgemm", "m=1,n=2", "fast", "threw", 0});
  store->record_miss(make_pending_miss(Identity{}));
  EXPECT_FALSE(store->find("b").has_value()) << "memory-only meanwhile";
  EXPECT_EQ(w.seen.size(), 1u) << "one warning, not one per call:\n" << w.all();
  shut_out(false);
  store->put(sample("c"));
  EXPECT_TRUE(store->find("b").has_value());
  EXPECT_TRUE(store->find("c").has_value());
  EXPECT_EQ(store->find("a")->stale, "failed live");
  EXPECT_EQ(store->bans("a").size(), 1u);
  ASSERT_EQ(w.seen.size(), 2u) << w.all();
  EXPECT_NE(w.seen[1].find("reachable again"), std::string::npos) << w.seen[1];
  // Kept at the end of the session: written when the store is closed, if it can be.
  shut_out(true);
  store->put(sample("d"));
  shut_out(false);
  store.reset();
  EXPECT_TRUE(open_store(spec(), {})->find("d").has_value());
}

// The "server gone mid-run" through a Tuner: tuning goes on memory-only, a warning
// names the server, and the choice made meanwhile is on the server once it is back.
TEST_F(PostgresStore, ATunerGoesOnWhileTheServerIsGoneAndItsChoicesLandWhenItIsBack) {
  const std::string role = make_role();
  fakes::FakeDevice device;
  device.behaviour["def"].seconds = 2e-3;
  device.behaviour["fast"].seconds = 1e-3;
  auto op = fakes::make_fake_op(device, {"def", "fast"}, "def");
  Warnings w;
  TunerOptions options;
  options.persist.store = with_parameter(spec(), "user=" + role);
  options.hooks.log = Log::warnings_to(w.sink());
  Tuner tuner(device, options);
  EXPECT_EQ(tuner.select(*op, Key{{"n", 1}}).source, Source::searched);
  auto admin = postgres_admin();
  admin->run("ALTER ROLE \"" + role + "\" NOLOGIN");
  admin->run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", {role});
  EXPECT_EQ(tuner.select(*op, Key{{"n", 2}}).source, Source::searched) << "tuning goes on";
  EXPECT_EQ(tuner.select(*op, Key{{"n", 2}}).source, Source::memory_hit);
  ASSERT_EQ(w.seen.size(), 1u) << w.all();
  EXPECT_NE(w.seen[0].find(shown_store_spec(options.persist.store)), std::string::npos)
      << w.seen[0];
  EXPECT_EQ(open_store(spec(), {})->list().size(), 1u) << "n=2 is not on the server yet";
  admin->run("ALTER ROLE \"" + role + "\" LOGIN");
  EXPECT_EQ(tuner.select(*op, Key{{"n", 3}}).source, Source::searched);
  const auto stored = open_store(spec(), {})->list();
  ASSERT_EQ(stored.size(), 3u) << "the choice made while it was gone was written";
  for (const StoredChoice& c : stored) EXPECT_EQ(c.winner, "fast") << c.key;
}

TEST_F(PostgresStore, ARoleThatMayOnlyReadIsServedReadOnly) {
  {
    auto store = open_store(spec(), {});
    ASSERT_NE(store, nullptr);
    store->put(sample("a"));
  }
  const std::string role = make_role();
  auto admin = postgres_admin();
  admin->run("GRANT USAGE ON SCHEMA \"" + schema() + "\" TO \"" + role + "\"");
  admin->run("GRANT SELECT ON ALL TABLES IN SCHEMA \"" + schema() + "\" TO \"" + role + "\"");
  Warnings w;
  StoreOpening o =
      open_store_checked(with_parameter(spec(), "user=" + role), StoreOptions{}, w.sink());
  ASSERT_EQ(o.state, StoreState::read_only) << o.message;
  EXPECT_TRUE(o.store->find("a").has_value());
  o.store->put(sample("b"));
  o.store->ban({"a", "sgemm", "m=1,n=2", "fast", "threw", 0});
  ASSERT_EQ(w.seen.size(), 1u) << w.all();
  EXPECT_NE(w.seen[0].find("read-only"), std::string::npos) << w.seen[0];
  EXPECT_FALSE(open_store(spec(), {})->find("b").has_value());
}

// ---------------------------------------------------------------------------------------------
// Tuning leases (docs/fleet.md "Leases"); what every store does is the contract suite.

constexpr std::chrono::milliseconds kLeaseTtl{60000};

TuningLease lease_for(const std::string& digest, const std::string& holder) {
  return {digest, "sgemm", "m=1,n=2", holder, 0, 0};
}

TEST_F(PostgresStore, ARoleThatMayOnlyReadAnswersLeasesUnavailable) {
  {
    auto store = open_store(spec(), {});
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(store->take_lease(lease_for("a", "writer"), kLeaseTtl).state, LeaseState::held);
  }
  const std::string role = make_role();
  auto admin = postgres_admin();
  admin->run("GRANT USAGE ON SCHEMA \"" + schema() + "\" TO \"" + role + "\"");
  admin->run("GRANT SELECT ON ALL TABLES IN SCHEMA \"" + schema() + "\" TO \"" + role + "\"");
  const std::string reader = with_parameter(spec(), "user=" + role);
  StoreOpening o = open_store_checked(reader, StoreOptions{}, {});
  ASSERT_EQ(o.state, StoreState::read_only) << o.message;
  const LeaseTaking t = o.store->take_lease(lease_for("b", "reader"), kLeaseTtl);
  EXPECT_EQ(t.state, LeaseState::unavailable);
  EXPECT_NE(t.why.find("read-only (the role may not write its tables)"), std::string::npos)
      << t.why;
  EXPECT_NE(t.why.find(shown_store_spec(reader)), std::string::npos) << t.why;
  EXPECT_FALSE(o.store->renew_lease("a", "writer", kLeaseTtl));
  o.store->release_lease("a", "writer");
  const auto listed = o.store->leases();
  ASSERT_EQ(listed.size(), 1u) << "a reader still lists them";
  EXPECT_EQ(listed[0].holder, "writer");
}

// The holder's connection is refused and its backend terminated (the server is away for it):
// leases are unavailable, naming the server with its password masked, renew is false, release
// does nothing, the clock falls back to this machine's; once the server is back the holder's
// lease is its own again.
TEST_F(PostgresStore, AServerGoneAnswersLeasesUnavailableNamingItWithThePasswordMasked) {
  const std::string role = make_role();
  // The test cluster trusts its users: the password is never checked, only never shown.
  const std::string url = with_parameter(spec(), "user=" + role + "&password=s3cret");
  Warnings w;
  auto store = open_store(url, w.sink());
  ASSERT_NE(store, nullptr) << w.all();
  ASSERT_EQ(store->take_lease(lease_for("a", "h1"), kLeaseTtl).state, LeaseState::held);
  auto admin = postgres_admin();
  admin->run("ALTER ROLE \"" + role + "\" NOLOGIN");
  admin->run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", {role});
  const LeaseTaking t = store->take_lease(lease_for("a", "h1"), kLeaseTtl);
  EXPECT_EQ(t.state, LeaseState::unavailable);
  EXPECT_NE(t.why.find("cannot be reached"), std::string::npos) << t.why;
  EXPECT_NE(t.why.find(shown_store_spec(url)), std::string::npos) << t.why;
  EXPECT_NE(t.why.find("password=***"), std::string::npos) << t.why;
  EXPECT_EQ(t.why.find("s3cret"), std::string::npos) << t.why;
  EXPECT_FALSE(store->renew_lease("a", "h1", kLeaseTtl));
  store->release_lease("a", "h1");
  EXPECT_TRUE(store->leases().empty()) << "nothing to list while it is away";
  EXPECT_GT(store->now_ms(), 0);
  ASSERT_EQ(w.seen.size(), 1u) << w.all();
  EXPECT_EQ(w.seen[0].find("s3cret"), std::string::npos) << w.seen[0];
  admin->run("ALTER ROLE \"" + role + "\" LOGIN");
  LeaseTaking back;
  for (int i = 0; i < 400 && back.state == LeaseState::unavailable; ++i) {
    back = store->take_lease(lease_for("a", "h1"), kLeaseTtl);  // retried once a second
    if (back.state == LeaseState::unavailable) ::usleep(10000);
  }
  EXPECT_EQ(back.state, LeaseState::held) << back.why;
  ASSERT_EQ(open_store(spec(), {})->leases().size(), 1u) << "the release while away did nothing";
}

// A server at schema 1 (before leases): a role that may write migrates it to the current schema
// (leases, shared searches); a role that may only read is served it read-only as it is, without
// leases or a work queue.
TEST_F(PostgresStore, ASchemaOneServerGainsLeasesFromAWriterAndIsReadOnlyToAReader) {
  {
    auto store = open_store(spec(), {});
    ASSERT_NE(store, nullptr);
    store->put(sample("a"));
  }
  auto admin = postgres_admin();
  admin->run("DROP TABLE " + detail::pg_table(schema(), "leases"));
  admin->run("UPDATE " + detail::pg_table(schema(), "meta") +
             " SET value = '1' WHERE name = 'schema_version'");
  const std::string role = make_role();
  admin->run("GRANT USAGE ON SCHEMA \"" + schema() + "\" TO \"" + role + "\"");
  admin->run("GRANT SELECT ON ALL TABLES IN SCHEMA \"" + schema() + "\" TO \"" + role + "\"");
  StoreOpening reader =
      open_store_checked(with_parameter(spec(), "user=" + role), StoreOptions{}, {});
  ASSERT_EQ(reader.state, StoreState::read_only) << reader.message;
  EXPECT_NE(reader.message.find("may not migrate it from schema 1 to " +
                                std::to_string(detail::kPgSchemaVersion)),
            std::string::npos)
      << reader.message;
  EXPECT_TRUE(reader.store->find("a").has_value());
  EXPECT_EQ(reader.store->take_lease(lease_for("a", "r"), kLeaseTtl).state,
            LeaseState::unavailable);
  EXPECT_TRUE(reader.store->leases().empty());
  std::string why;
  EXPECT_EQ(reader.store->open_work_queue(why), nullptr);
  EXPECT_NE(why.find("cannot hold shared searches"), std::string::npos) << why;
  EXPECT_EQ(version_on_server(), "1") << "a reader migrates nothing";
  auto writer = open_store(spec(), {});
  ASSERT_NE(writer, nullptr);
  EXPECT_EQ(version_on_server(), std::to_string(detail::kPgSchemaVersion));
  EXPECT_NE(writer->open_work_queue(why), nullptr) << why;
  EXPECT_TRUE(writer->find("a").has_value()) << "its entries are kept";
  EXPECT_EQ(writer->take_lease(lease_for("a", "w"), kLeaseTtl).state, LeaseState::held);
}

// Text PostgreSQL cannot keep (not UTF-8): that one write is refused with a warning naming the
// store; the store goes on.
TEST_F(PostgresStore, AWriteTheServerRefusesIsWarnedAndTheStoreGoesOn) {
  Warnings w;
  auto store = open_store(spec(), w.sink());
  ASSERT_NE(store, nullptr);
  StoredChoice bad = sample("bad");
  bad.key = "name=\xff\xfe";
  store->put(bad);
  ASSERT_EQ(w.seen.size(), 1u) << w.all();
  EXPECT_NE(w.seen[0].find("writing the store"), std::string::npos) << w.seen[0];
  store->put(sample("good"));
  EXPECT_TRUE(store->find("good").has_value());
  EXPECT_FALSE(store->find("bad").has_value());
  EXPECT_EQ(w.seen.size(), 1u) << w.all();
}

}  // namespace
}  // namespace tunekit
