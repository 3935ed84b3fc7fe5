// The SQL text of the PostgreSQL store (DESIGN §8): every statement with the schema's tables
// named once. Values are only ever parameters ($1, ...): the text holds nothing but
// tunekit's own identifiers.
#pragma once

#include <string>
#include <vector>

namespace tunekit::detail {

// The server's clock in unix milliseconds: it judges every lease (of a key, of a work item),
// so clients' clocks never have to agree.
inline constexpr const char* kPgClock = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

struct PgStatements {
  explicit PgStatements(const std::string& schema);
  std::string find, list_all, list_op, put, stale, ban, bans_all, bans_of, miss, pending_all,
      pending_op, remove_pending;
  std::vector<std::string> remove;
  std::string take_lease, lease_of, renew_lease, release_lease, leases, now_ms;

 private:
  // Tuning leases (docs/fleet.md "Leases"), by kPgClock. $1..$4: digest, op, key, holder;
  // $5: ttl in ms.
  void lease_statements(const std::string& table);
};

}  // namespace tunekit::detail
