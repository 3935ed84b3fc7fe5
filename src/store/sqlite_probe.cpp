#include "store/sqlite_probe.hpp"

#include <sqlite3.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "store/sqlite_leases.hpp"
#include "store/sqlite_store.hpp"

namespace tunekit::detail {
namespace {

using std::chrono::milliseconds;

// The current schema. Every statement is idempotent: a store of an older version gets the
// tables it lacks from it, then the column changes of migrate() (a new file has them here).
const char* const kSchema = R"sql(
CREATE TABLE IF NOT EXISTS tunekit_meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS choices(
  identity_digest TEXT PRIMARY KEY,
  op TEXT NOT NULL,
  key TEXT NOT NULL,
  key_digest TEXT NOT NULL,
  device TEXT NOT NULL,
  toolchain TEXT NOT NULL,
  environment TEXT NOT NULL,
  numerics_policy TEXT NOT NULL,
  candidates TEXT NOT NULL,
  winner TEXT NOT NULL,
  winner_config TEXT NOT NULL,
  evidence TEXT NOT NULL,
  measured INTEGER NOT NULL,
  budget_cut INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  tunekit_version TEXT NOT NULL,
  stale TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS choices_op ON choices(op);
CREATE TABLE IF NOT EXISTS bans(
  identity_digest TEXT NOT NULL,
  op TEXT NOT NULL,
  key TEXT NOT NULL,
  candidate TEXT NOT NULL,
  reason TEXT NOT NULL,
  banned_at INTEGER NOT NULL,
  PRIMARY KEY(identity_digest, candidate));
CREATE TABLE IF NOT EXISTS pending(
  identity_digest TEXT PRIMARY KEY,
  op TEXT NOT NULL,
  key TEXT NOT NULL,
  candidates TEXT NOT NULL,
  device TEXT NOT NULL,
  environment TEXT NOT NULL,
  numerics_policy TEXT NOT NULL,
  count INTEGER NOT NULL,
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS pending_op ON pending(op);
)sql";
// The tables of the current schema, in the order kSchema and the leases make them.
const std::string& schema_sql() {
  static const std::string sql = std::string(kSchema) + kSqliteLeasesTable;
  return sql;
}

// Schema 1 -> 2: entries gain `stale` (bans and pending come from kSchema). 2 -> 3 adds only
// the leases table (kSqliteLeasesTable, run with kSchema): the version number is all it writes.
const char* const kMigrateTo2 = "ALTER TABLE choices ADD COLUMN stale TEXT NOT NULL DEFAULT '';";

SqliteProblem problem_of(const Connection& c, int rc, const char* message = nullptr) {
  const std::string why = c.failure(rc, message);
  if (is_busy(rc)) return {StoreState::locked, why};
  switch (rc & 0xff) {
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
      return {StoreState::unreadable, "not readable (" + why + ")"};
    default:
      return {StoreState::not_a_store, "not a tunekit store or corrupt (" + why + ")"};
  }
}

// Single-value query; nullopt (and the problem in `p`) on failure.
std::optional<std::string> query_one(Connection& c, const char* sql, SqliteProblem& p) {
  try {
    Statement s(c, sql);
    const int rc = s.step(c);
    if (rc == SQLITE_DONE) return "";
    if (rc == SQLITE_ROW) return s.text(0);
    p = problem_of(c, rc);
  } catch (const SqlError& e) {
    p = problem_of(c, e.rc(), e.what());
  }
  return std::nullopt;
}

// The application id and the meta table: another process may be initialising the file
// right now (the meta table comes before the id's commit), so the table is the mark too.
SqliteProblem check_mark(Connection& c, const std::string& app_id) {
  if (app_id == std::to_string(kStoreApplicationId)) return {};
  SqliteProblem p;
  auto ours = query_one(
      c, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='tunekit_meta'", p);
  if (!ours) return p;
  if (app_id != "0" || *ours == "0") return {StoreState::not_a_store, "not a tunekit store"};
  return {};
}

SqliteProbe probe(Connection& c) {
  SqliteProbe r;
  SqliteProblem& p = r.problem;
  auto app_id = query_one(c, "PRAGMA application_id", p);
  auto tables = app_id ? query_one(c, "SELECT count(*) FROM sqlite_master", p) : std::nullopt;
  auto journal = tables ? query_one(c, "PRAGMA journal_mode", p) : std::nullopt;
  if (!journal) return r;
  r.wal = *journal == "wal";
  if (*tables == "0" && *app_id == "0") {
    r.empty = true;
    return r;
  }
  if (p = check_mark(c, *app_id); !p.ok()) return r;
  auto version = query_one(c, "SELECT value FROM tunekit_meta WHERE name = 'schema_version'", p);
  if (!version) return r;
  if (version->empty()) {
    p = {StoreState::not_a_store, "not a tunekit store (no schema version)"};
    return r;
  }
  r.version = std::atoi(version->c_str());
  if (r.version > kStoreSchemaVersion) {
    p = {StoreState::newer_schema, "written by a newer tunekit (schema " + *version +
                                       ", this one reads " + std::to_string(kStoreSchemaVersion) +
                                       ")"};
    return r;
  }
  auto check = query_one(c, "PRAGMA quick_check", p);
  if (!check) return r;
  if (*check != "ok") p = {StoreState::not_a_store, "corrupt (" + *check + ")"};
  r.initialised = *app_id == std::to_string(kStoreApplicationId);
  return r;
}

SqliteProblem exec(Connection& c, const std::string& sql, bool retry) {
  char* msg = nullptr;
  auto once = [&] {
    sqlite3_free(msg);
    msg = nullptr;
    return sqlite3_exec(c.get(), sql.c_str(), nullptr, nullptr, &msg);
  };
  const int rc = retry ? c.retry(once) : once();
  SqliteProblem p;
  if (is_busy(rc))
    p = {StoreState::locked, c.failure(rc, msg)};
  else if (rc != SQLITE_OK)
    p = {StoreState::not_creatable, "not initialisable (" + c.failure(rc, msg) + ")"};
  sqlite3_free(msg);
  return p;
}

// The schema version inside the write transaction: another process may have created or
// migrated the file since it was probed.
std::optional<int> version_now(Connection& c, SqliteProblem& p) {
  auto text = query_one(c, "SELECT value FROM tunekit_meta WHERE name = 'schema_version'", p);
  if (!text) return std::nullopt;
  return std::atoi(text->c_str());
}

// Creates what is missing and migrates an older schema in place, in one transaction: a file
// is at its old version or at this one, never between.
SqliteProblem create_or_migrate(Connection& c) {
  const std::string schema =
      std::string("PRAGMA application_id=") + std::to_string(kStoreApplicationId) + ";" +
      schema_sql() + "INSERT OR IGNORE INTO tunekit_meta(name, value) VALUES('schema_version', '" +
      std::to_string(kStoreSchemaVersion) + "');";
  if (SqliteProblem p = exec(c, schema, false); !p.ok()) return p;
  SqliteProblem p;
  const std::optional<int> version = version_now(c, p);
  if (!version) return p;
  if (*version > kStoreSchemaVersion)
    return {StoreState::newer_schema, "written by a newer tunekit (schema " +
                                          std::to_string(*version) + ", this one reads " +
                                          std::to_string(kStoreSchemaVersion) + ")"};
  if (*version == kStoreSchemaVersion) return {};
  if (*version < 2) {
    // Only what is missing: a file may carry the column under an older version number.
    auto has_stale =
        query_one(c, "SELECT count(*) FROM pragma_table_info('choices') WHERE name = 'stale'", p);
    if (!has_stale) return p;
    if (*has_stale == "0") {
      if (p = exec(c, kMigrateTo2, false); !p.ok()) return p;
    }
  }
  return exec(c,
              "UPDATE tunekit_meta SET value = '" + std::to_string(kStoreSchemaVersion) +
                  "' WHERE name = 'schema_version'",
              false);
}

// "file:" URI of a path (RFC 3986: everything but unreserved characters and '/' escaped).
std::string file_uri(const std::string& path) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char ch : std::filesystem::absolute(path).string()) {
    if (std::isalnum(ch) || ch == '/' || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
      uri += static_cast<char>(ch);
    } else {
      uri += '%';
      uri += kHex[ch >> 4];
      uri += kHex[ch & 15];
    }
  }
  return uri;
}

std::unique_ptr<Connection> connect(const std::string& name, int flags, SqliteProblem& p) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &db, flags | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    p = {StoreState::unreadable,
         "not openable (" + std::string(db ? sqlite3_errmsg(db) : "out of memory") + ")"};
    sqlite3_close(db);
    return nullptr;
  }
  return std::make_unique<Connection>(db);
}

// A read-only connection needs the -shm file writable; where this user cannot create it,
// the file is read as immutable. That is exact only when no -wal file holds changes (the last
// writer to close checkpoints and removes it).
bool may_read_immutable(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path + "-wal", ec);
  return ec || size == 0;
}

}  // namespace

// Writes only what is missing: an initialised WAL store of this version is opened without
// taking the write lock, so a store another process is writing is still read at once.
SqliteProblem initialise_store(Connection& c, const SqliteProbe& found, milliseconds wait) {
  c.wait_at_most(wait);
  if (!found.wal) {
    if (SqliteProblem p = exec(c, "PRAGMA journal_mode=WAL", true); !p.ok()) return p;
  }
  if (found.initialised && found.version == kStoreSchemaVersion) return {};
  if (SqliteProblem p = exec(c, "BEGIN IMMEDIATE", true); !p.ok()) return p;
  SqliteProblem p = create_or_migrate(c);
  if (p.ok()) p = exec(c, "COMMIT", true);
  if (!p.ok()) exec(c, "ROLLBACK", false);  // its own outcome must not hide the real cause
  return p;
}

SqliteOpened connect_and_probe(const std::string& path, bool read_only, milliseconds wait) {
  SqliteOpened o;
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  o.c = connect(path, flags, o.found.problem);
  if (!o.c) return o;
  o.c->wait_at_most(wait);
  o.found = probe(*o.c);
  if (!read_only || o.found.problem.state != StoreState::unreadable || !may_read_immutable(path))
    return o;
  SqliteProblem p;
  auto immutable =
      connect(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, p);
  if (!immutable) return o;
  immutable->wait_at_most(wait);
  SqliteProbe again = probe(*immutable);
  if (again.problem.ok()) o = {std::move(immutable), std::move(again)};
  return o;
}

}  // namespace tunekit::detail
