// The SQLite store's tuning leases (docs/fleet.md "Leases"): the `leases` table of schema 3
// and its statements. Each function runs on the store's connection under the caller's lock
// and deadline; a failure is an SqlError (the store turns it into `unavailable`).
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "store/sqlite_connection.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

// The table, as kSchema creates it (a schema-2 file gains it when it is migrated to 3).
inline constexpr const char* kSqliteLeasesTable = R"sql(
CREATE TABLE IF NOT EXISTS leases(
  identity_digest TEXT PRIMARY KEY,
  op TEXT NOT NULL,
  key TEXT NOT NULL,
  holder TEXT NOT NULL,
  taken_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL);
)sql";

// This machine's clock, unix milliseconds: every process sharing a file reads the same one.
std::int64_t sqlite_lease_now_ms();

// One write transaction: the upsert that takes a free, expired or own lease, then the row,
// which says whether the caller holds it or whose it is.
LeaseTaking take_sqlite_lease(Connection& c, const TuningLease& wanted,
                              std::chrono::milliseconds ttl);
// True when the holder's row was pushed out (its own, expired or not: nobody took it over).
bool renew_sqlite_lease(Connection& c, std::string_view identity_digest, std::string_view holder,
                        std::chrono::milliseconds ttl);
void release_sqlite_lease(Connection& c, std::string_view identity_digest, std::string_view holder);
std::vector<TuningLease> sqlite_leases(Connection& c);

}  // namespace tunekit::detail
