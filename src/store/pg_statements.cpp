#include "store/pg_statements.hpp"

#include <sstream>

#include "store/pg_schema.hpp"
#include "store/store_rows.hpp"

namespace tunekit::detail {
namespace {

std::string placeholders(int count) {
  std::string out;
  for (int i = 1; i <= count; ++i) out += (i > 1 ? ",$" : "$") + std::to_string(i);
  return out;
}

// "a = EXCLUDED.a, b = EXCLUDED.b" for every column of `columns` but the first (the key).
std::string excluded_set(const char* columns) {
  std::stringstream in(columns);
  std::string column;
  std::string out;
  bool first = true;
  while (std::getline(in, column, ',')) {
    column.erase(0, column.find_first_not_of(' '));
    if (!first) out += (out.empty() ? "" : ", ") + column + " = EXCLUDED." + column;
    first = false;
  }
  return out;
}

}  // namespace

PgStatements::PgStatements(const std::string& schema) {
  const std::string choices = pg_table(schema, "choices");
  const std::string bans_table = pg_table(schema, "bans");
  const std::string pending_table = pg_table(schema, "pending");
  const std::string select = std::string("SELECT ") + kChoiceColumns + ", stale FROM " + choices;
  // Byte order, as SQLite sorts: the database's collation must not reorder a listing.
  find = select + " WHERE identity_digest = $1";
  const std::string order =
      " ORDER BY op COLLATE \"C\", key COLLATE \"C\", identity_digest COLLATE \"C\"";
  list_all = select + order;
  list_op = select + " WHERE op = $1" + order;
  put = "INSERT INTO " + choices + "(" + kChoiceColumns + ") VALUES(" + placeholders(16) +
        ") ON CONFLICT (identity_digest) DO UPDATE SET " + excluded_set(kChoiceColumns) +
        ", stale = ''";
  stale = "UPDATE " + choices + " SET stale = $1 WHERE identity_digest = $2";
  ban = "INSERT INTO " + bans_table + "(" + kBanColumns + ") VALUES(" + placeholders(6) +
        ") ON CONFLICT (identity_digest, candidate) DO UPDATE SET op = EXCLUDED.op, key = "
        "EXCLUDED.key, reason = EXCLUDED.reason, banned_at = EXCLUDED.banned_at";
  const std::string select_bans = std::string("SELECT ") + kBanColumns + " FROM " + bans_table;
  bans_all = select_bans + " ORDER BY banned_at, seq";
  bans_of = select_bans + " WHERE identity_digest = $1 ORDER BY banned_at, seq";
  miss = "INSERT INTO " + pending_table + "(" + kPendingColumns + ") VALUES(" + placeholders(10) +
         ") ON CONFLICT (identity_digest) DO UPDATE SET count = " + pending_table +
         ".count + EXCLUDED.count, last_seen = GREATEST(" + pending_table +
         ".last_seen, EXCLUDED.last_seen)";
  const std::string select_pending =
      std::string("SELECT ") + kPendingColumns + " FROM " + pending_table;
  pending_all = select_pending + " ORDER BY first_seen, seq";
  pending_op = select_pending + " WHERE op = $1 ORDER BY first_seen, seq";
  remove_pending = "DELETE FROM " + pending_table + " WHERE identity_digest = $1";
  // The entries go with their bans and pending records: what was forgotten is forgotten whole.
  const std::string matches = "identity_digest = $1 OR key_digest = $1 OR key = $1 OR op = $1";
  const std::string related = "identity_digest IN (SELECT identity_digest FROM " + choices +
                              " WHERE " + matches +
                              ") OR identity_digest = $1 OR key = $1 OR op = $1";
  remove = {"DELETE FROM " + bans_table + " WHERE " + related,
            "DELETE FROM " + pending_table + " WHERE " + related,
            "DELETE FROM " + choices + " WHERE " + matches};
  lease_statements(pg_table(schema, "leases"));
}

void PgStatements::lease_statements(const std::string& table) {
  const std::string clock = kPgClock;
  const std::string columns = "identity_digest, op, key, holder, taken_at_ms, expires_at_ms";
  // One statement, so atomic: it inserts, takes over an expired lease or renews the
  // holder's own; another holder's live lease is left alone and nothing is returned.
  take_lease = "WITH now AS (SELECT " + clock + " AS ms) INSERT INTO " + table + " AS lease(" +
               columns +
               ") SELECT $1::text, $2::text, $3::text, $4::text, ms, ms + $5::bigint FROM now "
               "ON CONFLICT "
               "(identity_digest) DO UPDATE SET op = EXCLUDED.op, key = EXCLUDED.key, "
               "holder = EXCLUDED.holder, taken_at_ms = CASE WHEN lease.holder = "
               "EXCLUDED.holder AND lease.expires_at_ms >= EXCLUDED.taken_at_ms THEN "
               "lease.taken_at_ms ELSE EXCLUDED.taken_at_ms END, expires_at_ms = "
               "EXCLUDED.expires_at_ms WHERE lease.expires_at_ms < EXCLUDED.taken_at_ms OR "
               "lease.holder = EXCLUDED.holder RETURNING " +
               columns;
  lease_of = "SELECT " + columns + " FROM " + table + " WHERE identity_digest = $1";
  renew_lease = "UPDATE " + table + " SET expires_at_ms = " + clock +
                " + $3::bigint WHERE identity_digest = $1 AND holder = $2";
  release_lease = "DELETE FROM " + table + " WHERE identity_digest = $1 AND holder = $2";
  leases = "SELECT " + columns + " FROM " + table + " ORDER BY identity_digest COLLATE \"C\"";
  now_ms = "SELECT " + clock;
}

}  // namespace tunekit::detail
