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
#include "store/sqlite_probe.hpp"
#include "store/store_path_check.hpp"
#include "store/store_rows.hpp"

namespace tunekit::detail {
namespace {

using std::chrono::milliseconds;

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
  auto refuse = [&](const SqliteProblem& p) {
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
  SqliteOpened o = connect_and_probe(path, as.read_only, options.read_wait);
  if (!o.found.problem.ok()) return refuse(o.found.problem);
  if (as.read_only) {
    as.empty = o.found.empty;
    as.version = o.found.version;
  } else if (SqliteProblem p = initialise_store(*o.c, o.found, options.write_wait); !p.ok()) {
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
