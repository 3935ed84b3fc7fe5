// End to end with the PostgreSQL store (TUNEKIT_TEST_POSTGRES_URL; scripts/test starts a
// private server): `tunekit tune` stores into it through TUNEKIT_STORE or --store, a second
// tune replays from it, `cache ls/show/rm` work on it, and no message shows a password.
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/cli_runner.hpp"
#include "store/pg_session.hpp"
#include "unit/store/store_under_test.hpp"

namespace {

using nlohmann::json;
using tunekit::testing::CliResult;
using tunekit::testing::contains;
using tunekit::testing::parse_json;

using tunekit::testing::kTuneSum;

class PostgresCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!under_test_.problem().empty()) FAIL() << under_test_.problem();
    ASSERT_FALSE(dir_.path().empty());
  }
  CliResult tunekit(const std::string& args, const std::string& env = "") {
    return tunekit::testing::run_cli(args, dir_ / "cache", dir_.path(), env);
  }
  // The test's store with a password in its URL (the test server trusts loopback: it is
  // ignored there, and must never be shown).
  std::string spec_with_password() const {
    std::string spec = under_test_.spec();
    spec.replace(spec.find("://") + 3, 0, "tunekit:pa55word@");
    const std::size_t doubled = spec.find("@tunekit@");
    if (doubled != std::string::npos) spec.erase(doubled, 8);  // the URL named the user already
    return spec;
  }

  tunekit::testing::StoreUnderTest under_test_{"postgresql"};
  tunekit::testing::TempDir dir_;
};

TEST_F(PostgresCli, TuneStoresOnTheServerAndTheCacheCommandsWorkOnIt) {
  const std::string store = "TUNEKIT_STORE='" + spec_with_password() + "'";
  const CliResult first = tunekit(kTuneSum, store);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(parse_json(first).at("source"), "searched");
  const CliResult second = tunekit(kTuneSum, store);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(parse_json(second).at("source"), "cache_replay") << "served from the server";

  const CliResult ls = tunekit("cache ls", store);
  ASSERT_EQ(ls.status, 0) << ls.err;
  EXPECT_TRUE(contains(ls.out, "sum")) << ls.out;
  EXPECT_TRUE(contains(ls.out, "tunekit:***@")) << "the header names the server:\n" << ls.out;
  const CliResult listed = tunekit("cache ls --json --store '" + spec_with_password() + "'");
  ASSERT_EQ(listed.status, 0) << listed.err;
  const json entries = parse_json(listed);
  ASSERT_EQ(entries.size(), 1u) << listed.out;
  EXPECT_TRUE(entries[0].at("evidence").at("candidates").is_array());
  const std::string digest = entries[0].at("identity_digest").get<std::string>();
  const CliResult show = tunekit("cache show " + digest.substr(0, 8), store);
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_TRUE(contains(show.out, digest)) << show.out;
  const CliResult rm = tunekit("cache rm sum", store);
  ASSERT_EQ(rm.status, 0) << rm.err;
  EXPECT_TRUE(contains(rm.out, "removed 1")) << rm.out;
  for (const CliResult* run : {&first, &second, &ls, &listed, &show, &rm})
    EXPECT_FALSE(contains(run->out + run->err, "pa55word")) << run->out << run->err;
}

TEST_F(PostgresCli, AnUnreachableServerIsAClearErrorWithoutItsPassword) {
  const CliResult ls = tunekit("cache ls --store 'postgresql://me:pa55word@127.0.0.1:1/db'");
  EXPECT_EQ(ls.status, 10) << ls.err;  // its own exit status, with its own advice
  EXPECT_TRUE(contains(ls.err, "check that the server runs")) << ls.err;
  EXPECT_TRUE(contains(ls.err, "postgresql://me:***@127.0.0.1:1/db")) << ls.err;
  EXPECT_TRUE(contains(ls.err, "unreachable")) << ls.err;
  EXPECT_FALSE(contains(ls.out + ls.err, "pa55word")) << ls.err;
  // A tune goes on memory-only, with the warning, and succeeds.
  const CliResult tune =
      tunekit(kTuneSum, "TUNEKIT_STORE='postgresql://me:pa55word@127.0.0.1:1/db'");
  EXPECT_EQ(tune.status, 0) << tune.err;
  EXPECT_TRUE(contains(tune.err, "unreachable")) << tune.err;
  EXPECT_FALSE(contains(tune.out + tune.err, "pa55word")) << tune.err;
  const CliResult bad = tunekit(kTuneSum, "TUNEKIT_STORE='postgres:nowhere'");
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(contains(bad.err, "TUNEKIT_STORE")) << bad.err;
}

}  // namespace
