#include "store/pg_session.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <cstdlib>

#include "store/store_registry.hpp"

namespace tunekit::detail {
namespace {

// libpq ends its messages with a newline (and sometimes several lines): one line for warnings.
std::string one_line(const char* message) {
  std::string text;
  for (const char* p = message ? message : ""; *p; ++p) {
    const bool space = *p == '\n' || *p == '\t' || *p == ' ';
    if (!space)
      text += *p;
    else if (!text.empty() && text.back() != ' ')
      text += ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.empty() ? "no message from libpq" : text;
}

PgFailure failure_of(const std::string& sqlstate, bool connection_ok) {
  if (!connection_ok) return PgFailure::lost;
  const std::string cls = sqlstate.substr(0, 2);
  // 08: connection exceptions; 57P01-3: the server is shutting down or not yet accepting.
  if (cls == "08" || sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03")
    return PgFailure::lost;
  if (sqlstate == "57014" || sqlstate == "55P03") return PgFailure::timed_out;
  if (cls == "28" || sqlstate == "42501") return PgFailure::denied;
  return PgFailure::refused;
}

}  // namespace

PgRows::PgRows(pg_result* result) : result_(result) {}
PgRows::~PgRows() {
  PQclear(result_);
}
PgRows::PgRows(PgRows&& other) noexcept : result_(other.result_) {
  other.result_ = nullptr;
}

int PgRows::size() const {
  return PQntuples(result_);
}

std::size_t PgRows::affected() const {
  const char* n = PQcmdTuples(result_);
  return n && *n ? static_cast<std::size_t>(std::strtoull(n, nullptr, 10)) : 0;
}

std::string PgRows::Row::text(int column) const {
  const char* value = PQgetvalue(rows->result_, index, column);
  return std::string(value, static_cast<std::size_t>(PQgetlength(rows->result_, index, column)));
}

std::int64_t PgRows::Row::integer(int column) const {
  const std::string value = text(column);
  if (value == "t") return 1;  // a boolean column
  if (value == "f") return 0;
  return std::strtoll(value.c_str(), nullptr, 10);
}

std::unique_ptr<PgSession> PgSession::connect(const std::string& url,
                                              std::chrono::milliseconds connect_timeout) {
  // libpq takes whole seconds, at least 2 (a smaller value is raised to 2 by libpq itself).
  const auto seconds = std::max<long long>(2, (connect_timeout.count() + 999) / 1000);
  const std::string timeout = std::to_string(seconds);
  // Earlier keywords are overridden by what the URL (expanded from dbname) says. Keepalives
  // and a TCP user timeout: a network that vanishes mid-statement ends the call in about 30 s
  // instead of the kernel's retransmission limit (often 15 minutes).
  const char* const keys[] = {"application_name",
                              "connect_timeout",
                              "keepalives",
                              "keepalives_idle",
                              "keepalives_interval",
                              "keepalives_count",
                              "tcp_user_timeout",
                              "dbname",
                              nullptr};
  const char* const values[] = {"tunekit", timeout.c_str(), "1",         "10",   "5",
                                "3",       "30000",         url.c_str(), nullptr};
  pg_conn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (!conn) throw PgError(PgFailure::lost, "", "out of memory in libpq");
  if (PQstatus(conn) != CONNECTION_OK) {
    // libpq quotes the URI, or a token of it, in some messages: never its secrets.
    const std::string why = scrub_secrets(one_line(PQerrorMessage(conn)), url);
    const bool auth = PQconnectionNeedsPassword(conn) ||
                      why.find("authentication") != std::string::npos ||
                      why.find("permission denied") != std::string::npos ||
                      why.find("does not exist") != std::string::npos;
    PQfinish(conn);
    throw PgError(auth ? PgFailure::denied : PgFailure::lost, "", why);
  }
  // The server's notices ("schema ... already exists, skipping") are not for the user: the
  // library prints nothing of its own.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<PgSession>(new PgSession(conn));
}

PgSession::~PgSession() {
  PQfinish(conn_);
}

PgRows PgSession::run(const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::string& p : params) values.push_back(p.c_str());
  pg_result* result = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                   values.data(), nullptr, nullptr, /*resultFormat=*/0);
  PgRows rows(result);
  const ExecStatusType status = PQresultStatus(result);
  if (result && (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)) return rows;
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state ? state : "";
  const char* message = result ? PQresultErrorMessage(result) : nullptr;
  const std::string why = one_line(message && *message ? message : PQerrorMessage(conn_));
  throw PgError(failure_of(sqlstate, PQstatus(conn_) == CONNECTION_OK), sqlstate, why);
}

void PgSession::wait_at_most(std::chrono::milliseconds wait) {
  if (wait == wait_) return;
  // 0 would mean "no limit" to PostgreSQL: the shortest wait it honours is 1 ms.
  const std::string ms = std::to_string(std::max<long long>(1, wait.count()));
  run("SELECT set_config('statement_timeout', $1, false), set_config('lock_timeout', $1, false)",
      {ms});
  wait_ = wait;
}

bool PgSession::usable() const {
  return PQstatus(conn_) == CONNECTION_OK;
}

int PgSession::backend_pid() const {
  return PQbackendPID(conn_);
}

}  // namespace tunekit::detail
