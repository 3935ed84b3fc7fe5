// One SQLite connection of the embedded store and the statements run on it: every wait for a
// lock is bounded by the deadline of the operation running (wait_at_most), and every failure
// is an SqlError carrying SQLite's result code and a message that names a lock as such.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::detail {

bool is_busy(int rc);
void back_off(int attempt);

// A connection and the deadline of the operation running on it: SQLite's busy handler and
// retry() both stop waiting there, so one operation never waits past its bound (the old
// unbounded retries stalled every command for a minute behind a lock).
class Connection {
 public:
  explicit Connection(sqlite3* db);
  ~Connection() { sqlite3_close(db_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* get() const { return db_; }
  void wait_at_most(std::chrono::milliseconds wait);
  bool expired() const { return std::chrono::steady_clock::now() >= deadline_; }

  // Runs fn until it stops failing with SQLITE_BUSY/LOCKED or the deadline passes.
  template <class Fn>
  int retry(Fn&& fn) {
    for (int attempt = 0;; ++attempt) {
      const int rc = fn();
      if (!is_busy(rc) || expired()) return rc;
      back_off(attempt);
    }
  }

  // Why a call failed, in words; a lock is named as such ("database is locked" alone does not
  // say that another process holds it, nor how long tunekit waited).
  std::string failure(int rc, const char* message = nullptr) const;

 private:
  static int on_busy(void* self, int attempt);

  sqlite3* db_;
  std::chrono::milliseconds wait_{0};
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::now();
};

// An SQLite failure: its result code and the text Connection::failure made of it.
class SqlError : public std::runtime_error {
 public:
  SqlError(int rc, const std::string& what) : std::runtime_error(what), rc_(rc) {}
  int rc() const { return rc_; }

 private:
  int rc_;
};

class Statement {
 public:
  Statement(Connection& c, const std::string& sql);
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() { return stmt_; }
  void bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  std::string text(int col) {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : "";
  }
  std::int64_t integer(int col) { return sqlite3_column_int64(stmt_, col); }

  // Steps to the next row (SQLITE_ROW), to the end (SQLITE_DONE) or to a failure, retrying a
  // busy step from the start until the deadline; `restarted` is told when rows already seen
  // will come again.
  template <class OnRestart>
  int step(Connection& c, OnRestart&& restarted) {
    for (int attempt = 0;; ++attempt) {
      const int rc = sqlite3_step(stmt_);
      if (!is_busy(rc) || c.expired()) return rc;
      sqlite3_reset(stmt_);
      restarted();
      back_off(attempt);
    }
  }
  int step(Connection& c) {
    return step(c, [] {});
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Steps a statement that returns no rows; a failure is an SqlError.
void step_done(Connection& c, Statement& s);

// Every row of a query, read by `row`; a busy step that restarts the query starts over.
template <class T, class Row>
std::vector<T> rows_of(Connection& c, Statement& s, Row&& row) {
  std::vector<T> out;
  int rc;
  while ((rc = s.step(c, [&] { out.clear(); })) == SQLITE_ROW) out.push_back(row(s));
  if (rc != SQLITE_DONE) throw SqlError(rc, c.failure(rc));
  return out;
}

void exec_or_throw(Connection& c, const char* sql);

// Runs `body` in one write transaction: several statements land together or not at all.
template <class Body>
auto in_transaction(Connection& c, Body&& body) {
  exec_or_throw(c, "BEGIN IMMEDIATE");
  try {
    auto result = body();
    exec_or_throw(c, "COMMIT");
    return result;
  } catch (...) {
    sqlite3_exec(c.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace tunekit::detail
