#include "store/sqlite_connection.hpp"

#include <algorithm>
#include <thread>

namespace tunekit::detail {
namespace {

using std::chrono::milliseconds;

std::string seconds_text(milliseconds wait) {
  const auto ms = wait.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

}  // namespace

bool is_busy(int rc) {
  return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

void back_off(int attempt) {
  std::this_thread::sleep_for(milliseconds(std::min(1 + attempt, 25)));
}

Connection::Connection(sqlite3* db) : db_(db) {
  sqlite3_busy_handler(db_, &Connection::on_busy, this);
}

void Connection::wait_at_most(milliseconds wait) {
  wait_ = wait;
  deadline_ = std::chrono::steady_clock::now() + wait;
}

std::string Connection::failure(int rc, const char* message) const {
  std::string text = message ? message : sqlite3_errmsg(db_);
  if (text.empty() || text == "not an error") text = sqlite3_errstr(rc);
  if (is_busy(rc))
    return "locked by another process (" + text + "; waited " + seconds_text(wait_) + ")";
  return text;
}

int Connection::on_busy(void* self, int attempt) {
  if (static_cast<Connection*>(self)->expired()) return 0;
  back_off(attempt);
  return 1;
}

Statement::Statement(Connection& c, const std::string& sql) {
  const int rc = c.retry([&] {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    return sqlite3_prepare_v2(c.get(), sql.c_str(), -1, &stmt_, nullptr);
  });
  if (rc != SQLITE_OK) {
    SqlError error(rc, c.failure(rc));
    sqlite3_finalize(stmt_);
    throw error;
  }
}

void step_done(Connection& c, Statement& s) {
  const int rc = s.step(c);
  if (rc != SQLITE_DONE) throw SqlError(rc, c.failure(rc));
}

void exec_or_throw(Connection& c, const char* sql) {
  const int rc = c.retry([&] { return sqlite3_exec(c.get(), sql, nullptr, nullptr, nullptr); });
  if (rc != SQLITE_OK) throw SqlError(rc, c.failure(rc));
}

}  // namespace tunekit::detail
