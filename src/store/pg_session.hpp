// One libpq connection (DESIGN §8: the server store): connects with application_name=tunekit
// and bounded connect/statement times, runs parameterised statements only (PQexecParams: no
// value is ever spliced into SQL text), and classifies what fails: the connection was lost,
// the statement timed out, or the server refused it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct pg_conn;
struct pg_result;

namespace tunekit::detail {

enum class PgFailure {
  lost,       // no connection (refused, reset, the backend terminated, the server shut down)
  timed_out,  // statement_timeout (a lock held past the wait) or a cancel
  denied,     // authentication or privileges
  refused     // any other error of the statement (bad data, constraint, ...)
};

class PgError : public std::runtime_error {
 public:
  PgError(PgFailure failure, std::string sqlstate, const std::string& what)
      : std::runtime_error(what), failure_(failure), sqlstate_(std::move(sqlstate)) {}
  PgFailure failure() const { return failure_; }
  const std::string& sqlstate() const { return sqlstate_; }

 private:
  PgFailure failure_;
  std::string sqlstate_;
};

// The rows of one result, text format.
class PgRows {
 public:
  explicit PgRows(pg_result* result);
  ~PgRows();
  PgRows(PgRows&& other) noexcept;
  PgRows& operator=(PgRows&&) = delete;
  PgRows(const PgRows&) = delete;
  PgRows& operator=(const PgRows&) = delete;

  int size() const;
  std::size_t affected() const;  // rows an INSERT/UPDATE/DELETE touched

  // One row, as the store's row readers take it (store_rows.hpp).
  struct Row {
    const PgRows* rows;
    int index;
    std::string text(int column) const;
    std::int64_t integer(int column) const;
  };
  Row row(int index) const { return {this, index}; }

 private:
  pg_result* result_;
};

class PgSession {
 public:
  // Connects to a libpq URL ("postgresql://..."); the URL's own parameters win over tunekit's
  // defaults (application_name=tunekit, connect_timeout). A failure is a PgError (lost when
  // the server cannot be reached, denied for authentication).
  static std::unique_ptr<PgSession> connect(const std::string& url,
                                            std::chrono::milliseconds connect_timeout);
  ~PgSession();
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  // Runs one statement with its parameters ($1, $2, ... as text); a failure is a PgError.
  PgRows run(const std::string& sql, const std::vector<std::string>& params = {});
  // Sets statement_timeout (and lock_timeout) when it differs from what was set last.
  void wait_at_most(std::chrono::milliseconds wait);
  // Whether libpq still holds a usable connection.
  bool usable() const;
  int backend_pid() const;

 private:
  explicit PgSession(pg_conn* conn) : conn_(conn) {}
  pg_conn* conn_;
  std::chrono::milliseconds wait_{-1};
};

// Runs `body` in one transaction: its statements land together or not at all.
template <class Body>
auto in_pg_transaction(PgSession& s, Body&& body) {
  s.run("BEGIN");
  try {
    auto result = body();
    s.run("COMMIT");
    return result;
  } catch (...) {
    if (s.usable()) {
      try {
        s.run("ROLLBACK");
      } catch (const PgError&) {  // its own failure must not hide the real cause
      }
    }
    throw;
  }
}

}  // namespace tunekit::detail
