#include "store/pg_schema.hpp"

#include <cctype>
#include <vector>

#include "store/store_registry.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

constexpr const char* kSchemaParameter = "tunekit_schema=";
constexpr int kAdvisoryLockClass = 0x544b4954;  // "TKIT"

// The statements that bring version N-1 to N (index N-1); "@S" is the quoted schema name.
// Statements are idempotent: a version is applied whole or not at all (one transaction).
const std::vector<std::vector<std::string>>& migrations() {
  static const std::vector<std::vector<std::string>> steps = {
      {R"sql(CREATE TABLE IF NOT EXISTS @S.choices(
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
  measured BOOLEAN NOT NULL,
  budget_cut BOOLEAN NOT NULL,
  created_at BIGINT NOT NULL,
  tunekit_version TEXT NOT NULL,
  stale TEXT NOT NULL DEFAULT ''))sql",
       "CREATE INDEX IF NOT EXISTS choices_op ON @S.choices(op)",
       "CREATE INDEX IF NOT EXISTS choices_key_digest ON @S.choices(key_digest)",
       R"sql(CREATE TABLE IF NOT EXISTS @S.bans(
  identity_digest TEXT NOT NULL,
  op TEXT NOT NULL,
  key TEXT NOT NULL,
  candidate TEXT NOT NULL,
  reason TEXT NOT NULL,
  banned_at BIGINT NOT NULL,
  seq BIGSERIAL,
  PRIMARY KEY(identity_digest, candidate)))sql",
       R"sql(CREATE TABLE IF NOT EXISTS @S.pending(
  identity_digest TEXT PRIMARY KEY,
  op TEXT NOT NULL,
  key TEXT NOT NULL,
  candidates TEXT NOT NULL,
  device TEXT NOT NULL,
  environment TEXT NOT NULL,
  numerics_policy TEXT NOT NULL,
  count BIGINT NOT NULL,
  first_seen BIGINT NOT NULL,
  last_seen BIGINT NOT NULL,
  seq BIGSERIAL))sql",
       "CREATE INDEX IF NOT EXISTS pending_op ON @S.pending(op)"},
      // 2: tuning leases (docs/fleet.md "Leases"); times are unix ms of the server's clock.
      {R"sql(CREATE TABLE IF NOT EXISTS @S.leases(
  identity_digest TEXT PRIMARY KEY,
  op TEXT NOT NULL,
  key TEXT NOT NULL,
  holder TEXT NOT NULL,
  taken_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL))sql"},
      // 3: shared searches (docs/fleet.md "Shared searches"): the searches workers may help
      // with, and their points as leased work items.
      {R"sql(CREATE TABLE IF NOT EXISTS @S.searches(
  id BIGSERIAL PRIMARY KEY,
  identity_digest TEXT NOT NULL,
  op TEXT NOT NULL,
  key TEXT NOT NULL,
  coordinator TEXT NOT NULL,
  opened_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL))sql",
       R"sql(CREATE TABLE IF NOT EXISTS @S.work_items(
  id BIGSERIAL PRIMARY KEY,
  search BIGINT NOT NULL REFERENCES @S.searches(id) ON DELETE CASCADE,
  point BIGINT NOT NULL,
  config TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued',
  holder TEXT NOT NULL DEFAULT '',
  expires_at_ms BIGINT NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT '',
  value DOUBLE PRECISION NOT NULL DEFAULT 0,
  evidence TEXT NOT NULL DEFAULT '',
  worker TEXT NOT NULL DEFAULT '',
  UNIQUE(search, point)))sql",
       "CREATE INDEX IF NOT EXISTS work_items_state ON @S.work_items(search, state, id)"},
  };
  return steps;
}

bool valid_schema_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  if (!(std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (unsigned char ch : name)
    if (!(std::islower(ch) || std::isdigit(ch) || ch == '_')) return false;
  return true;
}

std::string with_schema(const std::string& sql, const std::string& schema) {
  std::string out;
  const std::string quoted = "\"" + schema + "\"";  // valid_schema_name: nothing to escape
  for (std::size_t i = 0; i < sql.size(); ++i) {
    if (sql.compare(i, 2, "@S") == 0) {
      out += quoted;
      ++i;
    } else {
      out += sql[i];
    }
  }
  return out;
}

// The version the meta table records; -1: no meta table (or no schema); 0: no version row.
// Asked of the catalog first: a failed statement would abort the migration's transaction.
int recorded_version(PgSession& s, const std::string& schema) {
  const std::string meta = pg_table(schema, "meta");
  if (s.run("SELECT to_regclass($1) IS NOT NULL", {meta}).row(0).integer(0) == 0) return -1;
  PgRows rows = s.run("SELECT value FROM " + meta + " WHERE name = 'schema_version'");
  return rows.size() == 0 ? 0 : static_cast<int>(rows.row(0).integer(0));
}

PgSchemaState judge(int version, const std::string& schema) {
  if (version > kPgSchemaVersion)
    return {StoreState::newer_schema, "written by a newer tunekit (schema " +
                                          std::to_string(version) + ", this one reads " +
                                          std::to_string(kPgSchemaVersion) + ")"};
  if (version == 0)
    return {StoreState::not_a_store, "not a tunekit store (the PostgreSQL schema " + schema +
                                         " has a meta table without a schema version)"};
  return {};
}

// Inside the transaction, under the advisory lock: what another process did is seen here.
PgSchemaState create_or_migrate(PgSession& s, const std::string& schema) {
  s.run("SELECT pg_advisory_xact_lock($1::integer, hashtext($2))",
        {std::to_string(kAdvisoryLockClass), schema});
  s.run(with_schema("CREATE SCHEMA IF NOT EXISTS @S", schema));
  const bool had_meta = recorded_version(s, schema) >= 0;
  s.run(with_schema(
      "CREATE TABLE IF NOT EXISTS @S.meta(name TEXT PRIMARY KEY, value TEXT NOT NULL)", schema));
  int version = recorded_version(s, schema);
  if (version == 0 && had_meta) return judge(0, schema);
  if (version > kPgSchemaVersion) return judge(version, schema);
  for (int v = version + 1; v <= kPgSchemaVersion; ++v)
    for (const std::string& sql : migrations()[static_cast<std::size_t>(v - 1)])
      s.run(with_schema(sql, schema));
  s.run(with_schema("INSERT INTO @S.meta(name, value) VALUES('schema_version', $1) ON CONFLICT "
                    "(name) DO UPDATE SET value = EXCLUDED.value",
                    schema),
        {std::to_string(kPgSchemaVersion)});
  return {};
}

}  // namespace

PgLocation pg_location(const std::string& spec) {
  PgLocation where;
  where.schema = "tunekit";
  where.shown = mask_password(spec);
  const std::size_t query = spec.find('?');
  where.url = spec.substr(0, query);
  if (query == std::string::npos) return where;
  std::string kept;
  std::size_t start = query + 1;
  while (start <= spec.size()) {
    const std::size_t end = std::min(spec.find('&', start), spec.size());
    const std::string item = spec.substr(start, end - start);
    if (item.rfind(kSchemaParameter, 0) == 0) {
      where.schema = item.substr(std::string(kSchemaParameter).size());
      if (!valid_schema_name(where.schema))
        throw UsageError("store '" + where.shown + "': tunekit_schema='" + where.schema +
                         "' is not a schema name tunekit uses: a lower-case letter or _, then "
                         "lower-case letters, digits or _ (at most 63)");
    } else if (!item.empty()) {
      kept += (kept.empty() ? "?" : "&") + item;
    }
    start = end + 1;
  }
  where.url += kept;
  return where;
}

std::string pg_table(const std::string& schema, const char* table) {
  return "\"" + schema + "\"." + table;
}

PgSchemaState ensure_pg_schema(PgSession& s, const std::string& schema, bool create) {
  const int version = recorded_version(s, schema);
  if (version == kPgSchemaVersion) return {};
  if (version == 0 || version > kPgSchemaVersion) return judge(version, schema);
  if (!create && version < 0) return {StoreState::missing, "not there"};
  s.run("BEGIN");
  try {
    PgSchemaState state = create_or_migrate(s, schema);
    s.run(state.state == StoreState::ready ? "COMMIT" : "ROLLBACK");
    return state;
  } catch (const PgError& e) {
    if (s.usable()) {
      try {
        s.run("ROLLBACK");
      } catch (const PgError&) {  // its own failure must not hide the real cause
      }
    }
    if (e.failure() != PgFailure::denied && e.failure() != PgFailure::refused) throw;
    // A role that may read an older schema but not migrate it is served it read-only, as
    // it was before this tunekit (what the older schema lacks is unavailable).
    if (e.failure() == PgFailure::denied && version >= 1)
      return {StoreState::ready, "", version,
              "the role may not migrate it from schema " + std::to_string(version) + " to " +
                  std::to_string(kPgSchemaVersion) + " (" + e.what() + ")"};
    return {StoreState::not_creatable, "not initialisable (" + std::string(e.what()) + ")"};
  }
}

}  // namespace tunekit::detail
