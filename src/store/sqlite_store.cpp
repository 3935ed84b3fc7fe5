#include "store/sqlite_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "store/evidence_codec.hpp"
#include "store/sqlite_connection.hpp"
#include "store/sqlite_leases.hpp"
#include "store/store_path_check.hpp"
#include "store/store_rows.hpp"

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

// How the store was opened, for SqliteStore.
struct OpenedAs {
  bool read_only = false;
  std::string read_only_why;          // e.g. "not writable by you (Permission denied)"
  bool empty = false;                 // a read-only file that holds no tables yet
  int version = kStoreSchemaVersion;  // older only when read-only (nothing migrates it)
};

class SqliteStore final : public Store {
 public:
  SqliteStore(std::unique_ptr<Connection> c, std::string path, const StoreOptions& options,
              OpenedAs as, WarningSink warn)
      : c_(std::move(c)),
        path_(std::move(path)),
        options_(options),
        as_(std::move(as)),
        warn_(std::move(warn)) {}

  std::string describe() const override { return "sqlite:" + path_; }

  std::optional<StoredChoice> find(std::string_view identity_digest) override {
    std::optional<StoredChoice> found;
    read([&] {
      Statement s(*c_, select_choices() + " WHERE identity_digest = ?");
      s.bind(1, identity_digest);
      auto rows = rows_of<StoredChoice>(*c_, s, choice_from_row<Statement>);
      if (!rows.empty()) found = std::move(rows.front());
    });
    return found;
  }

  void put(const StoredChoice& c) override {
    write(Doing::write, options_.write_wait, [&] {
      Statement s(*c_, std::string("INSERT OR REPLACE INTO choices(") + kChoiceColumns +
                           ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      int i = 1;
      for (const std::string& t : choice_texts(c)) s.bind(i++, t);
      s.bind(i++, std::int64_t{c.measured});
      s.bind(i++, std::int64_t{c.budget_cut});
      s.bind(i++, c.created_at);
      s.bind(i++, c.tunekit_version);
      step_done(*c_, s);
    });
  }

  std::vector<StoredChoice> list(std::string_view op) override {
    std::vector<StoredChoice> out;
    read([&] {
      Statement s(*c_,
                  select_choices() + (op.empty() ? "" : " WHERE op = ?") + " ORDER BY op, key");
      if (!op.empty()) s.bind(1, op);
      out = rows_of<StoredChoice>(*c_, s, choice_from_row<Statement>);
    });
    return out;
  }

  // The entries go with their bans and pending records: what was forgotten is forgotten whole.
  std::size_t remove(std::string_view what) override {
    std::size_t removed = 0;
    write(Doing::remove, options_.write_wait, [&] {
      const char* const matches = "identity_digest = ?1 OR key_digest = ?1 OR key = ?1 OR op = ?1";
      const std::string related = std::string(
                                      "identity_digest IN (SELECT identity_digest FROM "
                                      "choices WHERE ") +
                                  matches + ") OR identity_digest = ?1 OR key = ?1 OR op = ?1";
      removed = in_transaction(*c_, [&] {
        for (const char* table : {"bans", "pending"}) {
          Statement s(*c_, std::string("DELETE FROM ") + table + " WHERE " + related);
          s.bind(1, what);
          step_done(*c_, s);
        }
        Statement s(*c_, std::string("DELETE FROM choices WHERE ") + matches);
        s.bind(1, what);
        step_done(*c_, s);
        return static_cast<std::size_t>(sqlite3_changes(c_->get()));
      });
    });
    return removed;
  }

  void mark_stale(std::string_view identity_digest, std::string_view reason) override {
    write(Doing::write, options_.write_wait, [&] {
      Statement s(*c_, "UPDATE choices SET stale = ? WHERE identity_digest = ?");
      s.bind(1, stale_reason(reason));
      s.bind(2, identity_digest);
      step_done(*c_, s);
    });
  }

  void ban(const BannedCandidate& b) override {
    write(Doing::write, options_.write_wait, [&] {
      Statement s(
          *c_, std::string("INSERT OR REPLACE INTO bans(") + kBanColumns + ") VALUES(?,?,?,?,?,?)");
      int i = 1;
      for (std::string_view t : {b.identity_digest, b.op, b.key, b.candidate, b.reason})
        s.bind(i++, t);
      s.bind(i, b.banned_at != 0 ? b.banned_at : unix_now());
      step_done(*c_, s);
    });
  }

  std::vector<BannedCandidate> bans(std::string_view identity_digest) override {
    std::vector<BannedCandidate> out;
    if (as_.version < 2) return out;  // an older read-only file has no bans table
    read([&] {
      Statement s(*c_, std::string("SELECT ") + kBanColumns + " FROM bans" +
                           (identity_digest.empty() ? "" : " WHERE identity_digest = ?") +
                           " ORDER BY banned_at, rowid");
      if (!identity_digest.empty()) s.bind(1, identity_digest);
      out = rows_of<BannedCandidate>(*c_, s, ban_from_row<Statement>);
    });
    return out;
  }

  // A miss is recorded on the serving path of mode cached, which must not stall: it waits for
  // a lock as long as a read does, not as long as a write.
  void record_miss(const PendingMiss& m) override {
    write(Doing::write, options_.read_wait, [&] {
      Statement s(*c_, std::string("INSERT INTO pending(") + kPendingColumns +
                           ") VALUES(?,?,?,?,?,?,?,?,?,?) ON CONFLICT(identity_digest) DO UPDATE "
                           "SET count = count + excluded.count, last_seen = "
                           "max(last_seen, excluded.last_seen)");
      int i = 1;
      for (std::string_view t : {m.identity_digest, m.op, m.key, m.candidates, m.device,
                                 m.environment, m.numerics_policy})
        s.bind(i++, t);
      const std::int64_t now = unix_now();
      s.bind(i++, std::max<std::int64_t>(m.count, 1));
      s.bind(i++, m.first_seen != 0 ? m.first_seen : now);
      s.bind(i++, m.last_seen != 0 ? m.last_seen : now);
      step_done(*c_, s);
    });
  }

  std::vector<PendingMiss> pending(std::string_view op) override {
    std::vector<PendingMiss> out;
    if (as_.version < 2) return out;  // an older read-only file has no pending table
    read([&] {
      Statement s(*c_, std::string("SELECT ") + kPendingColumns + " FROM pending" +
                           (op.empty() ? "" : " WHERE op = ?") + " ORDER BY first_seen, rowid");
      if (!op.empty()) s.bind(1, op);
      out = rows_of<PendingMiss>(*c_, s, pending_from_row<Statement>);
    });
    return out;
  }

  std::size_t remove_pending(std::string_view identity_digest) override {
    std::size_t removed = 0;
    write(Doing::remove, options_.write_wait, [&] {
      Statement s(*c_, "DELETE FROM pending WHERE identity_digest = ?");
      s.bind(1, identity_digest);
      step_done(*c_, s);
      removed = static_cast<std::size_t>(sqlite3_changes(c_->get()));
    });
    return removed;
  }

  // Leases take the write path's lock and bounded wait but are never kept for later: a store
  // that cannot be written answers unavailable, with the cause; a failed lease operation
  // answers for itself only (a lease is no reason to stop storing choices). A renewal waits
  // at most a third of its TTL, so a slow writer cannot make it outlive the lease.
  LeaseTaking take_lease(const TuningLease& wanted, milliseconds ttl) override {
    LeaseTaking taking;
    std::string why =
        lease_write(options_.write_wait, [&] { taking = take_sqlite_lease(*c_, wanted, ttl); });
    if (!why.empty()) return {LeaseState::unavailable, {}, std::move(why)};
    return taking;
  }

  bool renew_lease(std::string_view identity_digest, std::string_view holder,
                   milliseconds ttl) override {
    bool renewed = false;
    const std::string why = lease_write(std::min(options_.write_wait, ttl / 3), [&] {
      renewed = renew_sqlite_lease(*c_, identity_digest, holder, ttl);
    });
    return why.empty() && renewed;
  }

  void release_lease(std::string_view identity_digest, std::string_view holder) override {
    lease_write(options_.write_wait, [&] { release_sqlite_lease(*c_, identity_digest, holder); });
  }

  std::vector<TuningLease> leases() override {
    std::vector<TuningLease> out;
    if (as_.version < 3) return out;  // an older read-only file has no leases table
    read([&] { out = sqlite_leases(*c_); });
    return out;
  }

  std::int64_t now_ms() override { return sqlite_lease_now_ms(); }

 private:
  enum class Doing { read, write, remove };

  // SELECT of every StoredChoice column; an older read-only file has no `stale`: it serves.
  std::string select_choices() const {
    return std::string("SELECT ") + kChoiceColumns +
           (as_.version < 2 ? ", '' AS stale" : ", stale") + " FROM choices";
  }

  // One read under the mutex and the read wait; a failure is warned about (see failed()).
  template <class Fn>
  void read(Fn&& fn) {
    std::lock_guard lock(mutex_);
    if (reads_off_ || as_.empty) return;
    c_->wait_at_most(options_.read_wait);
    try {
      fn();
    } catch (const SqlError& e) {
      failed(Doing::read, e.rc(), e.what());
    }
  }

  // One write under the mutex, waiting at most `wait` for a lock; skipped (after the one
  // warning) when the store cannot be written. Returns why it was not done (empty: done).
  template <class Fn>
  std::string write(Doing doing, std::chrono::milliseconds wait, Fn&& fn) {
    std::lock_guard lock(mutex_);
    if (!writable()) return unwritable_why();
    c_->wait_at_most(wait);
    try {
      fn();
      return {};
    } catch (const SqlError& e) {
      failed(doing, e.rc(), e.what());
      return "the store " + path_ + " failed: " + e.what();
    }
  }

  // A lease operation under the mutex and `wait`: why it was not done (empty: done).
  template <class Fn>
  std::string lease_write(std::chrono::milliseconds wait, Fn&& fn) {
    std::lock_guard lock(mutex_);
    if (!writable()) return unwritable_why();
    c_->wait_at_most(wait);
    try {
      fn();
      return {};
    } catch (const SqlError& e) {
      return "the store " + path_ + " failed: " + e.what();
    }
  }

  std::string unwritable_why() const {
    if (as_.read_only) return "the store " + path_ + " is read-only (" + as_.read_only_why + ")";
    return "the store " + path_ + " is memory-only for this session (it was " + off_why_ + ")";
  }

  // False (after one warning) when nothing can be written: the file is read-only, or a write
  // already waited out a lock this session.
  bool writable() {
    if (as_.read_only && !warned_read_only_) {
      warned_read_only_ = true;
      warn("the store " + path_ + " is read-only (" + as_.read_only_why +
           "): its choices are served, new ones stay in memory for this session");
    }
    return !as_.read_only && !writes_off_;
  }

  // A lock waited out turns the store memory-only for the rest of the session (everything
  // after a read, writes after a write): a locked store costs one wait and one warning, not
  // one per call.
  void failed(Doing doing, int rc, const std::string& why) {
    const char* what = doing == Doing::read    ? "reading"
                       : doing == Doing::write ? "writing"
                                               : "removing from";
    if (!is_busy(rc)) {
      warn(std::string(what) + " the store " + path_ + " failed: " + why +
           "; the choice stays in memory for this session");
      return;
    }
    const bool already = writes_off_;
    writes_off_ = true;
    if (!already) off_why_ = why;
    if (doing == Doing::read) reads_off_ = true;
    if (already && doing != Doing::read) return;
    warn("the store " + path_ + " is " + why + " while " + what +
         (doing == Doing::read ? " it; running memory-only for the rest of this session"
                               : " it; new choices stay in memory for this session") +
         " (TUNEKIT_STORE_WAIT_MS sets how long to wait)");
  }

  void warn(const std::string& message) {
    if (warn_) warn_(message);
  }

  std::mutex mutex_;  // one operation at a time: the deadline is the connection's
  std::unique_ptr<Connection> c_;
  std::string path_;
  StoreOptions options_;
  OpenedAs as_;
  WarningSink warn_;
  bool reads_off_ = false;
  bool writes_off_ = false;
  std::string off_why_;  // what turned writes off (a lock waited out)
  bool warned_read_only_ = false;
};

// What stands between a file and a usable store; ready when nothing does.
struct Problem {
  StoreState state = StoreState::ready;
  std::string why;
  bool ok() const { return state == StoreState::ready; }
};

Problem problem_of(const Connection& c, int rc, const char* message = nullptr) {
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

// What the checks found in an existing file (read only: nothing is written).
struct Probe {
  Problem problem;
  bool empty = false;        // a new database: no tables, no application id
  bool initialised = false;  // ours (at `version`)
  int version = 0;           // the schema version it was written with (0: none yet)
  bool wal = false;
};

// Single-value query; nullopt (and the problem in `p`) on failure.
std::optional<std::string> query_one(Connection& c, const char* sql, Problem& p) {
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
Problem check_mark(Connection& c, const std::string& app_id) {
  if (app_id == std::to_string(kStoreApplicationId)) return {};
  Problem p;
  auto ours = query_one(
      c, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='tunekit_meta'", p);
  if (!ours) return p;
  if (app_id != "0" || *ours == "0") return {StoreState::not_a_store, "not a tunekit store"};
  return {};
}

Probe probe(Connection& c) {
  Probe r;
  Problem& p = r.problem;
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

Problem exec(Connection& c, const std::string& sql, bool retry) {
  char* msg = nullptr;
  auto once = [&] {
    sqlite3_free(msg);
    msg = nullptr;
    return sqlite3_exec(c.get(), sql.c_str(), nullptr, nullptr, &msg);
  };
  const int rc = retry ? c.retry(once) : once();
  Problem p;
  if (is_busy(rc))
    p = {StoreState::locked, c.failure(rc, msg)};
  else if (rc != SQLITE_OK)
    p = {StoreState::not_creatable, "not initialisable (" + c.failure(rc, msg) + ")"};
  sqlite3_free(msg);
  return p;
}

// The schema version inside the write transaction: another process may have created or
// migrated the file since it was probed.
std::optional<int> version_now(Connection& c, Problem& p) {
  auto text = query_one(c, "SELECT value FROM tunekit_meta WHERE name = 'schema_version'", p);
  if (!text) return std::nullopt;
  return std::atoi(text->c_str());
}

// Creates what is missing and migrates an older schema in place, in one transaction: a file
// is at its old version or at this one, never between.
Problem create_or_migrate(Connection& c) {
  const std::string schema =
      std::string("PRAGMA application_id=") + std::to_string(kStoreApplicationId) + ";" +
      schema_sql() + "INSERT OR IGNORE INTO tunekit_meta(name, value) VALUES('schema_version', '" +
      std::to_string(kStoreSchemaVersion) + "');";
  if (Problem p = exec(c, schema, false); !p.ok()) return p;
  Problem p;
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

// Writes only what is missing: an initialised WAL store of this version is opened without
// taking the write lock, so a store another process is writing is still read at once.
Problem initialise(Connection& c, const Probe& found, milliseconds wait) {
  c.wait_at_most(wait);
  if (!found.wal) {
    if (Problem p = exec(c, "PRAGMA journal_mode=WAL", true); !p.ok()) return p;
  }
  if (found.initialised && found.version == kStoreSchemaVersion) return {};
  if (Problem p = exec(c, "BEGIN IMMEDIATE", true); !p.ok()) return p;
  Problem p = create_or_migrate(c);
  if (p.ok()) p = exec(c, "COMMIT", true);
  if (!p.ok()) exec(c, "ROLLBACK", false);  // its own outcome must not hide the real cause
  return p;
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

std::unique_ptr<Connection> connect(const std::string& name, int flags, Problem& p) {
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

struct Opened {
  std::unique_ptr<Connection> c;
  Probe found;
};

Opened connect_and_probe(const std::string& path, bool read_only, milliseconds wait) {
  Opened o;
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  o.c = connect(path, flags, o.found.problem);
  if (!o.c) return o;
  o.c->wait_at_most(wait);
  o.found = probe(*o.c);
  if (!read_only || o.found.problem.state != StoreState::unreadable || !may_read_immutable(path))
    return o;
  Problem p;
  auto immutable =
      connect(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, p);
  if (!immutable) return o;
  immutable->wait_at_most(wait);
  Probe again = probe(*immutable);
  if (again.problem.ok()) o = {std::move(immutable), std::move(again)};
  return o;
}

std::string advice(StoreState state) {
  switch (state) {
    case StoreState::locked:
      return " (TUNEKIT_STORE_WAIT_MS sets how long to wait)";
    case StoreState::untrusted:
      return " (fix the permissions, or set TUNEKIT_TRUST_STORE=1 / StoreOptions::trust to use it "
             "anyway)";
    default:
      return "";
  }
}

}  // namespace

StoreOpening open_sqlite_store(const std::string& path, const StoreOptions& options,
                               const WarningSink& warn) {
  auto refuse = [&](const Problem& p) {
    StoreOpening o;
    o.state = p.state;
    o.why = p.why;
    o.message = "the store " + path + " is " + p.why +
                "; running memory-only (the file is left as it is)" + advice(p.state);
    if (warn) warn(o.message);
    return o;
  };
  StorePathCheck check = check_store_path(path, options);
  if (check.state == StoreState::ready && !check.exists) {
    if (std::string error = create_store_file(path); !error.empty())
      return refuse({StoreState::not_creatable, "not creatable (" + error + ")"});
    check = check_store_path(path, options);  // what was created (or raced in) is judged anew
  }
  if (check.state == StoreState::missing) {
    StoreOpening o;
    o.state = StoreState::missing;  // asked not to create it: nothing to warn about
    return o;
  }
  if (check.state != StoreState::ready && check.state != StoreState::read_only)
    return refuse({check.state, check.why});
  OpenedAs as{check.state == StoreState::read_only, check.why, false, kStoreSchemaVersion};
  Opened o = connect_and_probe(path, as.read_only, options.read_wait);
  if (!o.found.problem.ok()) return refuse(o.found.problem);
  if (as.read_only) {
    as.empty = o.found.empty;
    as.version = o.found.version;
  } else if (Problem p = initialise(*o.c, o.found, options.write_wait); !p.ok()) {
    return refuse(p);
  }
  sqlite3_exec(o.c->get(), "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr);
  StoreOpening opened;
  opened.state = as.read_only ? StoreState::read_only : StoreState::ready;
  if (as.read_only) {
    opened.why = as.read_only_why;
    opened.message = "the store " + path + " is read-only (" + as.read_only_why + ")";
  }
  opened.store = std::make_unique<SqliteStore>(std::move(o.c), path, options, std::move(as), warn);
  return opened;
}

}  // namespace tunekit::detail
