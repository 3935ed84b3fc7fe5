#include "store/sqlite_leases.hpp"

#include <string>

namespace tunekit::detail {
namespace {

constexpr const char* kLeaseColumns =
    "identity_digest, op, key, holder, taken_at_ms, expires_at_ms";

// ?1..?6 are the columns, ?5 is now. A live lease of another holder is left alone (the WHERE
// of DO UPDATE); the holder's own live lease keeps when it was taken.
constexpr const char* kTake =
    "INSERT INTO leases(identity_digest, op, key, holder, taken_at_ms, expires_at_ms) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(identity_digest) DO UPDATE SET "
    "op = excluded.op, key = excluded.key, holder = excluded.holder, "
    "taken_at_ms = CASE WHEN leases.holder = excluded.holder AND leases.expires_at_ms >= "
    "excluded.taken_at_ms THEN leases.taken_at_ms ELSE excluded.taken_at_ms END, "
    "expires_at_ms = excluded.expires_at_ms "
    "WHERE leases.expires_at_ms < excluded.taken_at_ms OR leases.holder = excluded.holder";

TuningLease lease_from_row(Statement& s) {
  return {s.text(0), s.text(1), s.text(2), s.text(3), s.integer(4), s.integer(5)};
}

}  // namespace

std::int64_t sqlite_lease_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

LeaseTaking take_sqlite_lease(Connection& c, const TuningLease& wanted,
                              std::chrono::milliseconds ttl) {
  return in_transaction(c, [&] {
    // Read inside the write transaction: no other writer runs between the two statements.
    const std::int64_t now = sqlite_lease_now_ms();
    Statement take(c, kTake);
    int i = 1;
    for (std::string_view t : {wanted.identity_digest, wanted.op, wanted.key, wanted.holder})
      take.bind(i++, t);
    take.bind(i++, now);
    take.bind(i, now + ttl.count());
    step_done(c, take);
    Statement read(
        c, std::string("SELECT ") + kLeaseColumns + " FROM leases WHERE identity_digest = ?");
    read.bind(1, wanted.identity_digest);
    auto rows = rows_of<TuningLease>(c, read, lease_from_row);
    LeaseTaking taking;
    if (rows.empty()) throw SqlError(SQLITE_INTERNAL, "the lease just written is not there");
    taking.current = std::move(rows.front());
    taking.state = taking.current.holder == wanted.holder ? LeaseState::held : LeaseState::busy;
    return taking;
  });
}

bool renew_sqlite_lease(Connection& c, std::string_view identity_digest, std::string_view holder,
                        std::chrono::milliseconds ttl) {
  Statement s(c, "UPDATE leases SET expires_at_ms = ? WHERE identity_digest = ? AND holder = ?");
  s.bind(1, sqlite_lease_now_ms() + ttl.count());
  s.bind(2, identity_digest);
  s.bind(3, holder);
  step_done(c, s);
  return sqlite3_changes(c.get()) == 1;
}

void release_sqlite_lease(Connection& c, std::string_view identity_digest,
                          std::string_view holder) {
  Statement s(c, "DELETE FROM leases WHERE identity_digest = ? AND holder = ?");
  s.bind(1, identity_digest);
  s.bind(2, holder);
  step_done(c, s);
}

std::vector<TuningLease> sqlite_leases(Connection& c) {
  Statement s(c, std::string("SELECT ") + kLeaseColumns + " FROM leases ORDER BY identity_digest");
  return rows_of<TuningLease>(c, s, lease_from_row);
}

}  // namespace tunekit::detail
