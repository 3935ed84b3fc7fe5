// Tests for src/store/store_registry.cpp: store specs parsed in one place (sqlite:PATH,
// postgresql://..., none), malformed specs saying what to write, passwords masked, and
// TUNEKIT_STORE read at the edge.
#include "store/store_registry.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "store/pg_schema.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"

namespace tunekit {
namespace {

std::string usage_error_of(const std::string& spec) {
  try {
    detail::parse_store_spec(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(StoreRegistry, EachSpecNamesItsKindAndLocation) {
  const auto sqlite = detail::parse_store_spec("sqlite:/a/b.db");
  ASSERT_NE(sqlite.kind, nullptr);
  EXPECT_EQ(sqlite.kind->name, "sqlite");
  EXPECT_EQ(sqlite.location, "/a/b.db");
  const auto pg = detail::parse_store_spec("postgresql://u@h:5432/db?sslmode=disable");
  ASSERT_NE(pg.kind, nullptr);
  EXPECT_EQ(pg.kind->name, "postgresql");
  EXPECT_EQ(pg.location, "postgresql://u@h:5432/db?sslmode=disable") << "libpq reads the URL";
  EXPECT_EQ(detail::parse_store_spec("postgres://h/db").kind->name, "postgres");
  EXPECT_EQ(detail::parse_store_spec("none").kind, nullptr);
  EXPECT_EQ(detail::parse_store_spec("memory").kind, nullptr);
  EXPECT_EQ(store_file_of("sqlite:/a/b.db"), "/a/b.db");
  EXPECT_EQ(store_file_of("postgresql://h/db"), "");
  EXPECT_EQ(store_file_of("none"), "");
}

TEST(StoreRegistry, AMalformedSpecSaysWhatToWriteAndNeverShowsAPassword) {
  EXPECT_NE(usage_error_of("redis://x").find("postgresql://HOST/DBNAME"), std::string::npos);
  EXPECT_NE(usage_error_of("sqlite").find("sqlite:PATH"), std::string::npos);
  EXPECT_NE(usage_error_of("sqlite:").find("sqlite:PATH"), std::string::npos);
  EXPECT_NE(usage_error_of("postgresql:").find("postgresql://"), std::string::npos);
  EXPECT_NE(usage_error_of("postgresql:db").find("write a URL"), std::string::npos);
  const std::string bad = usage_error_of("mysql://root:hunter2@h/db");
  EXPECT_EQ(bad.find("hunter2"), std::string::npos) << bad;
  EXPECT_NE(bad.find("***"), std::string::npos) << bad;
  EXPECT_THROW(open_store("", {}), UsageError);
}

TEST(StoreRegistry, PasswordsAreMaskedInTheUserPartAndTheQuery) {
  EXPECT_EQ(detail::mask_password("postgresql://u:secret@h:5432/db"),
            "postgresql://u:***@h:5432/db");
  EXPECT_EQ(detail::mask_password("postgresql://u@h/db?password=secret&sslmode=disable"),
            "postgresql://u@h/db?password=***&sslmode=disable");
  EXPECT_EQ(detail::mask_password("postgresql://u:p%40ss@h/db?a=1&password=x"),
            "postgresql://u:***@h/db?a=1&password=***");
  EXPECT_EQ(detail::mask_password("postgresql://h:5432/db"), "postgresql://h:5432/db");
  EXPECT_EQ(detail::mask_password("sqlite:/a:b@c/d.db"), "sqlite:/a:b@c/d.db");
  EXPECT_EQ(shown_store_spec("postgresql://u:s@h/db"), "postgresql://u:***@h/db");
}

// What libpq accepts, masked too: a raw '?' in the password (the user part ends at '@'), any
// parameter named ...password, a percent-encoded parameter name.
TEST(StoreRegistry, PasswordsAreMaskedWhereverLibpqWouldReadThem) {
  EXPECT_EQ(detail::mask_password("postgresql://u:pa?ss@h/db"), "postgresql://u:***@h/db");
  EXPECT_EQ(detail::mask_password("postgresql://u@h/db?sslpassword=keypw"),
            "postgresql://u@h/db?sslpassword=***");
  EXPECT_EQ(detail::mask_password("postgresql://u@h/db?pass%77ord=pw&x=1"),
            "postgresql://u@h/db?pass%77ord=***&x=1");
  EXPECT_EQ(detail::mask_password("postgresql://u@h/db?PASSWORD=pw"),
            "postgresql://u@h/db?PASSWORD=***");
  EXPECT_EQ(detail::mask_password("postgresql://u:a@b@h/db"), "postgresql://u:***@h/db");
}

// libpq's own messages quote the URI or one of its tokens: scrubbed before they are shown.
TEST(StoreRegistry, LibpqMessagesLoseTheSecretsTheyQuote) {
  const std::string url = "postgresql://u:50%off@h/db";
  const std::string scrubbed =
      detail::scrub_secrets("invalid percent-encoded token: \"50%off\"", url);
  EXPECT_EQ(scrubbed.find("50%off"), std::string::npos) << scrubbed;
  const std::string v6 = "postgresql://u:secret@[::1/db";
  const std::string quoted = detail::scrub_secrets(
      "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"" + v6 +
          "\"",
      v6);
  EXPECT_EQ(quoted.find("secret"), std::string::npos) << quoted;
  EXPECT_NE(quoted.find("postgresql://u:***@[::1/db"), std::string::npos) << quoted;
  EXPECT_EQ(detail::scrub_secrets("connection refused", url), "connection refused");
}

TEST(StoreRegistry, TunekitsSchemaParameterIsReadAndNotPassedToLibpq) {
  const auto plain = detail::pg_location("postgresql://h/db");
  EXPECT_EQ(plain.schema, "tunekit");
  EXPECT_EQ(plain.url, "postgresql://h/db");
  const auto named =
      detail::pg_location("postgresql://u:pw@h/db?sslmode=disable&tunekit_schema=fleet_1");
  EXPECT_EQ(named.schema, "fleet_1");
  EXPECT_EQ(named.url, "postgresql://u:pw@h/db?sslmode=disable");
  EXPECT_EQ(named.shown, "postgresql://u:***@h/db?sslmode=disable&tunekit_schema=fleet_1");
  for (const char* bad : {"Fleet", "1x", "a-b", "a\"b", ""}) {
    EXPECT_THROW(detail::pg_location(std::string("postgresql://h/db?tunekit_schema=") + bad),
                 UsageError)
        << bad;
  }
}

TEST(StoreRegistry, TunekitStoreIsReadFromTheEnvironmentAndCheckedThere) {
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  EXPECT_EQ(store_spec_from_environment(env({{"TUNEKIT_STORE", "postgresql://h/db"}})),
            "postgresql://h/db");
  EXPECT_EQ(store_spec_from_environment(env({{"TUNEKIT_CACHE_DIR", "/c"}})),
            "sqlite:/c/choices.db");
  try {
    store_spec_from_environment(env({{"TUNEKIT_STORE", "pg:h"}}));
    FAIL() << "a bad TUNEKIT_STORE was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("TUNEKIT_STORE"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunekit
