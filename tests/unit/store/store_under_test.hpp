// A fresh, empty store of each kind for the store tests: an SQLite file in a temporary
// directory, or a PostgreSQL schema of its own on the server TUNEKIT_TEST_POSTGRES_URL names
// (scripts/test starts a private cluster and sets it; without it a PostgreSQL test fails, it
// never skips). Each one is removed when the test ends.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "store/pg_session.hpp"
#include "tunekit/store.hpp"

namespace tunekit::testing {

inline const char* const kPostgresUrlVariable = "TUNEKIT_TEST_POSTGRES_URL";

// The server's URL, or empty (and the reason in `why`).
inline std::string postgres_test_url(std::string* why = nullptr) {
  const char* url = std::getenv(kPostgresUrlVariable);
  if (url && *url) return url;
  if (why)
    *why = std::string(kPostgresUrlVariable) +
           " is not set: run the tests with scripts/test (it starts a private PostgreSQL "
           "cluster), or start one with scripts/pg-cluster start DIR and export its URL";
  return "";
}

// `url` with one more query parameter.
inline std::string with_parameter(const std::string& url, const std::string& parameter) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + parameter;
}

// A name no other test process uses at the same time: pid and a counter.
inline std::string unique_name(const std::string& prefix) {
  static int counter = 0;
  return prefix + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

// A superuser connection to the test server, for what a test does around the store.
inline std::unique_ptr<detail::PgSession> postgres_admin() {
  return detail::PgSession::connect(postgres_test_url(), std::chrono::milliseconds(5000));
}

class StoreUnderTest {
 public:
  // kind: "sqlite" or "postgresql". `problem` is set when it cannot be made.
  explicit StoreUnderTest(const std::string& kind) : kind_(kind) {
    if (kind == "sqlite") {
      dir_ = std::filesystem::temp_directory_path() / unique_name("tunekit-contract-");
      std::filesystem::remove_all(dir_);
      spec_ = "sqlite:" + (dir_ / "choices.db").string();
      return;
    }
    const std::string url = postgres_test_url(&problem_);
    if (url.empty()) return;
    schema_ = unique_name("t_");
    spec_ = with_parameter(url, "tunekit_schema=" + schema_);
  }
  ~StoreUnderTest() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    if (schema_.empty()) return;
    try {
      postgres_admin()->run("DROP SCHEMA IF EXISTS \"" + schema_ + "\" CASCADE");
    } catch (const detail::PgError&) {  // the server is gone: nothing left to clean
    }
  }
  StoreUnderTest(const StoreUnderTest&) = delete;
  StoreUnderTest& operator=(const StoreUnderTest&) = delete;

  const std::string& spec() const { return spec_; }
  const std::string& problem() const { return problem_; }
  const std::string& schema() const { return schema_; }  // PostgreSQL only

 private:
  std::string kind_;
  std::string spec_;
  std::string problem_;
  std::filesystem::path dir_;
  std::string schema_;
};

}  // namespace tunekit::testing
