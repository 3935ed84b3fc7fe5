#include "store/postgres_store.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "store/pg_schema.hpp"
#include "store/pg_session.hpp"
#include "store/pg_statements.hpp"
#include "store/pg_work_queue.hpp"
#include "store/store_rows.hpp"

namespace tunekit::detail {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How often a read, or a miss on the serving path, may try to reach a lost server again (a
// put, a ban or a stale mark tries every time: they are rare and what they write matters).
constexpr milliseconds kRetryInterval{1000};

std::vector<std::string> put_params(const StoredChoice& c) {
  const auto texts = choice_texts(c);
  std::vector<std::string> p(texts.begin(), texts.end());
  p.push_back(c.measured ? "1" : "0");
  p.push_back(c.budget_cut ? "1" : "0");
  p.push_back(std::to_string(c.created_at));
  p.push_back(c.tunekit_version);
  return p;
}

TuningLease lease_from_row(const PgRows::Row& row) {
  return {row.text(0), row.text(1), row.text(2), row.text(3), row.integer(4), row.integer(5)};
}

std::int64_t local_now_ms() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <class T, class FromRow>
std::vector<T> all_rows(const PgRows& rows, FromRow&& from_row) {
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    PgRows::Row row = rows.row(i);
    out.push_back(from_row(row));
  }
  return out;
}

class PostgresStore final : public Store {
 public:
  PostgresStore(PgLocation where, const StoreOptions& options, WarningSink warn,
                std::unique_ptr<PgSession> session, std::string read_only_why, int version)
      : where_(std::move(where)),
        options_(options),
        warn_(std::move(warn)),
        sql_(where_.schema),
        session_(std::move(session)),
        read_only_why_(std::move(read_only_why)),
        version_(version) {}

  // One last try for what was kept: a choice made while the server was away is not given up
  // while it can still be written.
  ~PostgresStore() override {
    std::lock_guard lock(mutex_);
    if (kept_.empty()) return;
    if (!session_) reach();
    if (!kept_.empty())
      warn("the store " + where_.shown + " is still unreachable: " + std::to_string(kept_.size()) +
           " writes kept in memory this session were not written (" + last_why_ + ")");
  }

  std::string describe() const override { return where_.shown; }

  std::optional<StoredChoice> find(std::string_view identity_digest) override {
    std::optional<StoredChoice> found;
    read([&](PgSession& s) {
      const PgRows rows = s.run(sql_.find, {std::string(identity_digest)});
      if (rows.size() > 0) {
        PgRows::Row row = rows.row(0);
        found = choice_from_row(row);
      }
    });
    return found;
  }

  void put(const StoredChoice& c) override {
    write(options_.write_wait, Retry::always,
          [this, params = put_params(c)](PgSession& s) { s.run(sql_.put, params); });
  }

  std::vector<StoredChoice> list(std::string_view op) override {
    std::vector<StoredChoice> out;
    read([&](PgSession& s) {
      const PgRows rows =
          op.empty() ? s.run(sql_.list_all) : s.run(sql_.list_op, {std::string(op)});
      out = all_rows<StoredChoice>(rows, choice_from_row<PgRows::Row>);
    });
    return out;
  }

  std::size_t remove(std::string_view what) override {
    std::size_t removed = 0;
    now("removing from", [&](PgSession& s) {
      removed = in_pg_transaction(s, [&] {
        std::size_t n = 0;
        for (const std::string& sql : sql_.remove) n = s.run(sql, {std::string(what)}).affected();
        return n;  // the last statement's: the entries
      });
    });
    return removed;
  }

  void mark_stale(std::string_view identity_digest, std::string_view reason) override {
    write(options_.write_wait, Retry::always,
          [this, params = std::vector<std::string>{std::string(stale_reason(reason)),
                                                   std::string(identity_digest)}](PgSession& s) {
            s.run(sql_.stale, params);
          });
  }

  void ban(const BannedCandidate& b) override {
    // The time is taken now: a ban kept while the server is away keeps when it happened.
    std::vector<std::string> params{
        b.identity_digest, b.op,     b.key,
        b.candidate,       b.reason, std::to_string(b.banned_at != 0 ? b.banned_at : unix_now())};
    write(options_.write_wait, Retry::always,
          [this, params = std::move(params)](PgSession& s) { s.run(sql_.ban, params); });
  }

  std::vector<BannedCandidate> bans(std::string_view identity_digest) override {
    std::vector<BannedCandidate> out;
    read([&](PgSession& s) {
      const PgRows rows = identity_digest.empty()
                              ? s.run(sql_.bans_all)
                              : s.run(sql_.bans_of, {std::string(identity_digest)});
      out = all_rows<BannedCandidate>(rows, ban_from_row<PgRows::Row>);
    });
    return out;
  }

  // On the serving path of mode cached, which must not stall: it waits as long as a read, and
  // a lost server is tried again at most once per kRetryInterval.
  void record_miss(const PendingMiss& m) override {
    const std::int64_t at = unix_now();
    std::vector<std::string> params{m.identity_digest,
                                    m.op,
                                    m.key,
                                    m.candidates,
                                    m.device,
                                    m.environment,
                                    m.numerics_policy,
                                    std::to_string(std::max<std::int64_t>(m.count, 1)),
                                    std::to_string(m.first_seen != 0 ? m.first_seen : at),
                                    std::to_string(m.last_seen != 0 ? m.last_seen : at)};
    write(options_.read_wait, Retry::rate_limited,
          [this, params = std::move(params)](PgSession& s) { s.run(sql_.miss, params); });
  }

  std::vector<PendingMiss> pending(std::string_view op) override {
    std::vector<PendingMiss> out;
    read([&](PgSession& s) {
      const PgRows rows =
          op.empty() ? s.run(sql_.pending_all) : s.run(sql_.pending_op, {std::string(op)});
      out = all_rows<PendingMiss>(rows, pending_from_row<PgRows::Row>);
    });
    return out;
  }

  std::size_t remove_pending(std::string_view identity_digest) override {
    std::size_t removed = 0;
    now("removing from", [&](PgSession& s) {
      removed = s.run(sql_.remove_pending, {std::string(identity_digest)}).affected();
    });
    return removed;
  }

  LeaseTaking take_lease(const TuningLease& wanted, milliseconds ttl) override {
    LeaseTaking taking;
    const std::vector<std::string> params{wanted.identity_digest, wanted.op, wanted.key,
                                          wanted.holder, std::to_string(ttl.count())};
    std::string why = leasing([&](PgSession& s) { taking = take_on(s, params); });
    if (!why.empty()) return {LeaseState::unavailable, {}, std::move(why)};
    return taking;
  }

  bool renew_lease(std::string_view identity_digest, std::string_view holder,
                   milliseconds ttl) override {
    bool renewed = false;
    leasing([&](PgSession& s) {
      renewed = s.run(sql_.renew_lease, {std::string(identity_digest), std::string(holder),
                                         std::to_string(ttl.count())})
                    .affected() == 1;
    });
    return renewed;
  }

  void release_lease(std::string_view identity_digest, std::string_view holder) override {
    leasing([&](PgSession& s) {
      s.run(sql_.release_lease, {std::string(identity_digest), std::string(holder)});
    });
  }

  std::vector<TuningLease> leases() override {
    std::vector<TuningLease> out;
    if (version_ < 2) return out;  // an older schema this role may not migrate: no leases
    read([&](PgSession& s) { out = all_rows<TuningLease>(s.run(sql_.leases), lease_from_row); });
    return out;
  }

  std::unique_ptr<WorkQueue> open_work_queue(std::string& why) override {
    if (version_ < 3 || !read_only_why_.empty()) {
      why = "the store " + where_.shown + " cannot hold shared searches (" +
            (read_only_why_.empty() ? "its schema is older than 3" : read_only_why_) + ")";
      return nullptr;
    }
    return make_pg_work_queue(where_, options_);
  }

  // The server's clock; this machine's only while the server cannot be reached (nothing is
  // judged by it then: every lease is unavailable).
  std::int64_t now_ms() override {
    std::optional<std::int64_t> server;
    read([&](PgSession& s) { server = s.run(sql_.now_ms).row(0).integer(0); });
    return server ? *server : local_now_ms();
  }

 private:
  using Apply = std::function<void(PgSession&)>;

  // The upsert returns the row only when the caller holds the lease; else the live lease of
  // the other holder is read. When that one was released meanwhile, the take is tried again.
  LeaseTaking take_on(PgSession& s, const std::vector<std::string>& params) {
    for (int round = 0; round < 3; ++round) {
      const PgRows taken = s.run(sql_.take_lease, params);
      if (taken.size() > 0) return {LeaseState::held, lease_from_row(taken.row(0)), ""};
      const PgRows other = s.run(sql_.lease_of, {params[0]});
      if (other.size() > 0) return {LeaseState::busy, lease_from_row(other.row(0)), ""};
    }
    return {LeaseState::unavailable, {}, "the lease of " + params[0] + " kept changing hands"};
  }

  // A lease operation: now or not at all (a lease kept for later would claim what nobody
  // holds). Empty when the server answered, else why not, naming the store.
  std::string leasing(const Apply& apply) {
    std::lock_guard lock(mutex_);
    if (!writable())
      return "the store " + where_.shown + " is " +
             (off_ ? "no longer usable this session" : "read-only (" + read_only_why_ + ")");
    if (!session_ && !retry_due())
      return "the store " + where_.shown + " cannot be reached (" + last_why_ + ")";
    std::string refusal;
    if (attempt(apply, options_.write_wait, nullptr, &refusal)) return refusal;
    down(last_why_);
    return "the store " + where_.shown + " cannot be reached (" + last_why_ + ")";
  }
  enum class Retry { always, rate_limited };

  // A read under the mutex and the read wait; nothing (memory-only) while the server is away.
  template <class Fn>
  void read(Fn&& fn) {
    std::lock_guard lock(mutex_);
    if (off_ || (!session_ && !retry_due())) return;
    if (!attempt(Apply(std::forward<Fn>(fn)), options_.read_wait, "reading")) down(last_why_);
  }

  // A write that must not be lost: kept in memory while the server is away and written when
  // a later write reaches it.
  void write(milliseconds wait, Retry retry, Apply apply) {
    std::lock_guard lock(mutex_);
    if (!writable()) return;
    const bool try_now = session_ || retry == Retry::always || retry_due();
    if (try_now && attempt(apply, wait, "writing")) return;
    keep(std::move(apply));
    down(last_why_);
  }

  // A removal (a user's command): done now or not at all.
  void now(const char* doing, const Apply& apply) {
    std::lock_guard lock(mutex_);
    if (!writable()) return;
    if (!attempt(apply, options_.write_wait, doing)) down(last_why_);
  }

  // Runs `apply`, reaching the server again once when the connection was lost (a terminated
  // backend or a restarted server costs no warning). False: the server is unreachable.
  // With `refusal`, a refusal is told there instead of warned about (a lease's caller reports
  // it; it says nothing about the store's other tables).
  bool attempt(const Apply& apply, milliseconds wait, const char* doing,
               std::string* refusal = nullptr) {
    for (int round = 0; round < 2; ++round) {
      if (!session_ && !reach()) return false;
      try {
        session_->wait_at_most(wait);
        apply(*session_);
        return true;
      } catch (const PgError& e) {
        if (e.failure() != PgFailure::lost) {
          if (refusal)
            *refusal = "the store " + where_.shown + " refused it (" + e.what() + ")";
          else
            refused(e, doing);
          return true;  // answered (with a refusal): nothing to keep
        }
        session_.reset();
        last_why_ = e.what();
      }
    }
    return false;
  }

  // Connects again and checks the schema; the writes kept meanwhile are written first, in
  // the order they were made. False: still unreachable (or no longer usable).
  bool reach() {
    // The next retry is timed from the end of this attempt: a connect that waits out its
    // timeout (longer than the retry interval) must not make every later call wait again.
    struct Stamp {
      Clock::time_point& at;
      ~Stamp() { at = Clock::now(); }
    } stamp{last_attempt_};
    try {
      auto session = PgSession::connect(where_.url, options_.read_wait);
      session->wait_at_most(options_.write_wait);  // the schema lock and reads are bounded too
      const PgSchemaState schema = ensure_pg_schema(*session, where_.schema, options_.create);
      if (schema.state != StoreState::ready) {
        off_ = true;
        warn("the store " + where_.shown + " is " + schema.why +
             "; running memory-only for the rest of this session");
        return false;
      }
      version_ = schema.version;
      if (!schema.read_only_why.empty()) read_only_why_ = schema.read_only_why;
      session_ = std::move(session);
    } catch (const PgError& e) {
      last_why_ = e.what();
      return false;
    }
    flush();
    return session_ != nullptr;
  }

  void flush() {
    std::size_t written = 0;
    while (!kept_.empty()) {
      try {
        session_->wait_at_most(options_.write_wait);
        kept_.front()(*session_);
      } catch (const PgError& e) {
        if (e.failure() == PgFailure::lost) {
          session_.reset();
          last_why_ = e.what();
          return;
        }
        refused(e, "writing");
      }
      kept_.pop_front();
      ++written;
    }
    if (!down_) return;
    down_ = false;
    warn("the store " + where_.shown + " is reachable again: " + std::to_string(written) +
         " writes kept in memory meanwhile were written");
  }

  // The first loss is warned about; later calls stay memory-only without a warning each.
  void down(const std::string& why) {
    if (down_) return;
    down_ = true;
    warn("the store " + where_.shown + " cannot be reached (" + why +
         "); running memory-only: choices made meanwhile are kept and written at the next write "
         "that reaches it");
  }

  void keep(Apply apply) {
    if (kept_.size() < kMaxKeptWrites) {
      kept_.push_back(std::move(apply));
    } else if (!warned_full_) {
      warned_full_ = true;
      warn("the store " + where_.shown + " has been unreachable for " +
           std::to_string(kMaxKeptWrites) + " writes; newer ones stay in memory only");
    }
  }

  bool retry_due() const { return Clock::now() - last_attempt_ >= kRetryInterval; }

  bool writable() {
    if (!read_only_why_.empty() && !warned_read_only_) {
      warned_read_only_ = true;
      warn("the store " + where_.shown + " is read-only (" + read_only_why_ +
           "): its choices are served, new ones stay in memory for this session");
    }
    return read_only_why_.empty() && !off_;
  }

  // The server answered with an error: this write is not kept (it would fail again).
  void refused(const PgError& e, const char* doing) {
    if (e.failure() == PgFailure::denied) {
      read_only_why_ = e.what();
      writable();
      return;
    }
    if (e.failure() == PgFailure::timed_out) {
      if (warned_timeout_) return;
      warned_timeout_ = true;
    }
    warn(std::string(doing) + " the store " + where_.shown + " failed: " + e.what() +
         (e.failure() == PgFailure::timed_out ? " (TUNEKIT_STORE_WAIT_MS sets how long to wait)"
                                              : "") +
         "; the choice stays in memory for this session");
  }

  void warn(const std::string& message) {
    if (warn_) warn_(message);
  }

  std::mutex mutex_;  // one operation at a time on the one connection
  PgLocation where_;
  StoreOptions options_;
  WarningSink warn_;
  PgStatements sql_;
  std::unique_ptr<PgSession> session_;  // null while the server is away
  std::string read_only_why_;
  int version_;             // the schema's (older only when this role may not migrate it)
  std::deque<Apply> kept_;  // writes made while it was away, oldest first
  std::string last_why_;
  Clock::time_point last_attempt_ = Clock::now();
  bool down_ = false;  // warned as unreachable, not yet back
  bool off_ = false;   // no longer usable this session (e.g. migrated by a newer tunekit)
  bool warned_full_ = false;
  bool warned_read_only_ = false;
  bool warned_timeout_ = false;
};

std::string advice(StoreState state) {
  switch (state) {
    case StoreState::unreachable:
      return " (is the server up? check the host and port of the URL)";
    case StoreState::unreadable:
      return " (check the user, password and database of the URL, or the role's privileges)";
    default:
      return "";
  }
}

// Whether this role may write the store; empty: it may, else why not.
std::string read_only_why(PgSession& s, const std::string& schema) {
  const PgRows rows =
      s.run("SELECT has_table_privilege($1, 'INSERT')", {pg_table(schema, "choices")});
  return rows.size() > 0 && rows.row(0).integer(0) != 0 ? "" : "the role may not write its tables";
}

}  // namespace

StoreOpening open_postgres_store(const std::string& spec, const StoreOptions& options,
                                 const WarningSink& warn) {
  const PgLocation where = pg_location(spec);
  auto refuse = [&](StoreState state, const std::string& why) {
    StoreOpening o;
    o.state = state;
    o.why = why;
    o.message = "the store " + where.shown + " is " + why +
                "; running memory-only (nothing on the server is changed)" + advice(state);
    if (warn) warn(o.message);
    return o;
  };
  std::unique_ptr<PgSession> session;
  std::string read_only;
  int version = kPgSchemaVersion;
  try {
    session = PgSession::connect(where.url, options.read_wait);
    session->wait_at_most(options.write_wait);
    const PgSchemaState schema = ensure_pg_schema(*session, where.schema, options.create);
    if (schema.state == StoreState::missing) {
      StoreOpening o;
      o.state = StoreState::missing;  // asked not to create it: nothing to warn about
      o.why = "no tunekit tables in the PostgreSQL schema " + where.schema;
      return o;
    }
    if (schema.state != StoreState::ready) return refuse(schema.state, schema.why);
    version = schema.version;
    read_only =
        schema.read_only_why.empty() ? read_only_why(*session, where.schema) : schema.read_only_why;
  } catch (const PgError& e) {
    if (e.failure() == PgFailure::denied)
      return refuse(StoreState::unreadable, "not usable by you (" + std::string(e.what()) + ")");
    if (e.failure() == PgFailure::timed_out)
      return refuse(StoreState::locked, "busy past the wait (" + std::string(e.what()) + ")");
    return refuse(StoreState::unreachable, "unreachable (" + std::string(e.what()) + ")");
  }
  StoreOpening opened;
  opened.state = read_only.empty() ? StoreState::ready : StoreState::read_only;
  if (!read_only.empty()) {
    opened.why = read_only;
    opened.message = "the store " + where.shown + " is read-only (" + read_only + ")";
  }
  opened.store =
      std::make_unique<PostgresStore>(where, options, warn, std::move(session), read_only, version);
  return opened;
}

}  // namespace tunekit::detail
