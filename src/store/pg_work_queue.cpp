#include "store/pg_work_queue.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <mutex>
#include <type_traits>

#include "store/pg_session.hpp"
#include "store/pg_statements.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

using std::chrono::milliseconds;

constexpr const char* kItemColumns = "id, search, point, config, holder, attempts";

std::string value_text(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[64];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, r.ptr);
}

// NaN for anything that is not a number (the coordinator refuses such a reading).
double value_of(const std::string& text) {
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    return std::numeric_limits<double>::quiet_NaN();
  return value;
}

WorkItem item_from_row(const PgRows::Row& row) {
  WorkItem item;
  item.id = row.integer(0);
  item.search = row.integer(1);
  item.index = static_cast<std::size_t>(row.integer(2));
  item.config = row.text(3);
  item.holder = row.text(4);
  item.attempts = static_cast<int>(row.integer(5));
  return item;
}

struct QueueStatements {
  explicit QueueStatements(const std::string& schema) {
    const std::string searches = pg_table(schema, "searches");
    const std::string items = pg_table(schema, "work_items");
    const std::string clock = kPgClock;
    open = "INSERT INTO " + searches +
           "(identity_digest, op, key, coordinator, opened_at_ms, expires_at_ms) VALUES($1, $2, "
           "$3, $4, " +
           clock + ", " + clock + " + $5) RETURNING id";
    renew_search = "UPDATE " + searches + " SET expires_at_ms = " + clock +
                   " + $2 WHERE id = $1 AND coordinator = $3";
    close = "DELETE FROM " + searches + " WHERE id = $1";  // its items go with it (cascade)
    // A search whose coordinator stopped renewing it is gone: nobody will read its results.
    sweep = "DELETE FROM " + searches + " WHERE expires_at_ms < " + clock;
    list = "SELECT id, identity_digest, op, key, coordinator FROM " + searches + " ORDER BY id";
    add = "INSERT INTO " + items +
          "(search, point, config) SELECT $1, p, c FROM unnest($2::bigint[], $3::text[]) AS "
          "t(p, c) ON CONFLICT (search, point) DO NOTHING";
    take = "WITH now AS (SELECT " + clock + " AS ms) UPDATE " + items +
           " AS w SET state = 'leased', holder = $2, expires_at_ms = (SELECT ms FROM now) + $3, "
           "attempts = w.attempts + 1 WHERE w.id = (SELECT id FROM " +
           items +
           " WHERE search = ANY($1::bigint[]) AND (state = 'queued' OR (state = 'leased' AND "
           "expires_at_ms < (SELECT ms FROM now) AND attempts < $4)) ORDER BY id LIMIT 1 FOR "
           "UPDATE SKIP LOCKED) RETURNING " +
           std::string(kItemColumns);
    renew_item = "UPDATE " + items + " SET expires_at_ms = " + clock +
                 " + $3 WHERE id = $1 AND holder = $2 AND state = 'leased'";
    finish = "UPDATE " + items +
             " SET state = 'done', status = $3, value = $4::double precision, evidence = $5, "
             "worker = $6 WHERE id = $1 AND holder = $2 AND state = 'leased'";
    abandon = "UPDATE " + items +
              " SET state = 'done', status = 'crashed', worker = holder, evidence = '' WHERE "
              "search = $1 AND state = 'leased' AND expires_at_ms < " +
              clock + " AND attempts >= $2";
    // Collected once: the coordinator reads each result one time.
    collect = "UPDATE " + items +
              " SET state = 'collected' WHERE search = $1 AND state = "
              "'done' RETURNING " +
              std::string(kItemColumns) + ", status, value::text, evidence, worker";
    recollect = "UPDATE " + items +
                " SET state = 'collected' WHERE search = $1 AND state IN ('done', 'collected') "
                "RETURNING " +
                std::string(kItemColumns) + ", status, value::text, evidence, worker";
    requeue = "UPDATE " + items +
              " SET state = 'queued', holder = '' WHERE search = ANY($1::bigint[]) AND holder = "
              "$2 AND state = 'leased'";
    unfinished =
        "SELECT count(*) FROM " + items + " WHERE search = $1 AND state IN ('queued', 'leased')";
  }
  std::string open, renew_search, close, sweep, list, add, take, renew_item, finish, abandon,
      collect, recollect, requeue, unfinished;
};

class PgWorkQueue final : public WorkQueue {
 public:
  PgWorkQueue(PgLocation where, const StoreOptions& options)
      : where_(std::move(where)), options_(options), sql_(where_.schema) {}

  std::string describe() const override { return where_.shown; }

  std::int64_t open_search(const SharedSearch& s) override {
    return ask([&](PgSession& session) {
      return session
          .run(sql_.open,
               {s.identity_digest, s.op, s.key, s.coordinator, std::to_string(kSearchTtl.count())})
          .row(0)
          .integer(0);
    });
  }

  // Kept alive by the coordinator's polls (collect_finished renews it).
  void close_search(std::int64_t search) override {
    ask([&](PgSession& session) {
      return session.run(sql_.close, {std::to_string(search)}).affected();
    });
  }

  std::vector<SharedSearch> open_searches() override {
    return ask([&](PgSession& session) {
      session.run(sql_.sweep);
      const PgRows rows = session.run(sql_.list);
      std::vector<SharedSearch> out;
      for (int i = 0; i < rows.size(); ++i) {
        const PgRows::Row row = rows.row(i);
        out.push_back({row.integer(0), row.text(1), row.text(2), row.text(3), row.text(4)});
      }
      return out;
    });
  }

  void add_items(std::int64_t search,
                 std::span<const std::pair<std::size_t, std::string>> points) override {
    if (points.empty()) return;
    std::string indices = "{", configs = "{";
    for (const auto& [index, config] : points) {
      indices += (indices.size() > 1 ? "," : "") + std::to_string(index);
      configs += configs.size() > 1 ? "," : "";
      configs += '"';
      for (char ch : config) {
        if (ch == '"' || ch == '\\') configs += '\\';
        configs += ch;
      }
      configs += '"';
    }
    indices += "}";
    configs += "}";
    ask([&](PgSession& session) {
      return session.run(sql_.add, {std::to_string(search), indices, configs}).affected();
    });
  }

  std::optional<WorkItem> take_item(std::span<const std::int64_t> searches,
                                    const std::string& holder, milliseconds ttl,
                                    int max_attempts) override {
    if (searches.empty()) return std::nullopt;
    std::string ids = "{";
    for (std::int64_t id : searches) ids += (ids.size() > 1 ? "," : "") + std::to_string(id);
    ids += "}";
    const auto take = [&](PgSession& session) -> std::optional<WorkItem> {
      const PgRows rows = session.run(
          sql_.take, {ids, holder, std::to_string(ttl.count()), std::to_string(max_attempts)});
      if (rows.size() == 0) return std::nullopt;
      return item_from_row(rows.row(0));
    };
    // A take whose reply was lost may have leased an item: a caller that takes holds none of
    // these searches' items, so whatever it holds goes back to the queue first.
    return ask(take, [&](PgSession& session) {
      session.run(sql_.requeue, {ids, holder});
      return take(session);
    });
  }

  bool renew_item(std::int64_t item, const std::string& holder, milliseconds ttl) override {
    return ask([&](PgSession& session) {
      return session
                 .run(sql_.renew_item, {std::to_string(item), holder, std::to_string(ttl.count())})
                 .affected() == 1;
    });
  }

  bool finish_item(std::int64_t item, const std::string& holder, const WorkResult& r) override {
    return ask([&](PgSession& session) {
      return session
                 .run(sql_.finish, {std::to_string(item), holder, std::string(to_string(r.status)),
                                    value_text(r.value), r.evidence, r.worker})
                 .affected() == 1;
    });
  }

  std::size_t abandon_items(std::int64_t search, int max_attempts) override {
    return ask([&](PgSession& session) {
      return session.run(sql_.abandon, {std::to_string(search), std::to_string(max_attempts)})
          .affected();
    });
  }

  std::vector<FinishedItem> collect_finished(std::int64_t search,
                                             const std::string& coordinator) override {
    // Collecting marks what it returns; after a lost reply it reads every finished item of the
    // search again (the coordinator ignores the points it already has).
    const auto collect = [&](PgSession& session, const std::string& collect_sql) {
      if (session
              .run(sql_.renew_search,
                   {std::to_string(search), std::to_string(kSearchTtl.count()), coordinator})
              .affected() == 0)
        throw WorkQueueError("the shared search " + std::to_string(search) + " is gone from " +
                             where_.shown + " (dropped after ten minutes without a poll)");
      const PgRows rows = session.run(collect_sql, {std::to_string(search)});
      std::vector<FinishedItem> out;
      for (int i = 0; i < rows.size(); ++i) {
        const PgRows::Row row = rows.row(i);
        FinishedItem f;
        f.item = item_from_row(row);
        const std::optional<Status> status = status_from_string(row.text(6));
        f.result.status = status.value_or(Status::crashed);
        f.result.value = value_of(row.text(7));
        f.result.evidence = row.text(8);
        f.result.worker = row.text(9);
        out.push_back(std::move(f));
      }
      std::sort(out.begin(), out.end(),
                [](const FinishedItem& a, const FinishedItem& b) { return a.item.id < b.item.id; });
      return out;
    };
    return ask([&](PgSession& session) { return collect(session, sql_.collect); },
               [&](PgSession& session) { return collect(session, sql_.recollect); });
  }

  std::size_t unfinished_items(std::int64_t search) override {
    return ask([&](PgSession& session) {
      return static_cast<std::size_t>(
          session.run(sql_.unfinished, {std::to_string(search)}).row(0).integer(0));
    });
  }

 private:
  // Runs `fn` on the queue's connection, connecting again once when it was lost. What the
  // server refuses, or a server that cannot be reached, is a WorkQueueError naming the store.
  // A statement that must not simply run twice (its first run may have committed before the
  // connection dropped) gives `again`, run instead of it after a reconnect.
  template <class Fn, class Again>
  auto ask(Fn&& fn, Again&& again) -> std::invoke_result_t<Fn&, PgSession&> {
    std::lock_guard lock(mutex_);
    std::string why;
    for (int round = 0; round < 2; ++round) {
      try {
        if (!session_) {
          session_ = PgSession::connect(where_.url, options_.read_wait);
          session_->wait_at_most(options_.write_wait);
          const PgSchemaState schema = ensure_pg_schema(*session_, where_.schema, true);
          if (schema.state != StoreState::ready || schema.version < 3)
            throw WorkQueueError("the store " + where_.shown + " cannot hold shared searches (" +
                                 (schema.why.empty() ? schema.read_only_why : schema.why) + ")");
        }
        return round == 0 ? fn(*session_) : again(*session_);
      } catch (const PgError& e) {
        why = e.what();
        if (e.failure() != PgFailure::lost) break;
        session_.reset();
      }
    }
    throw WorkQueueError("the store " + where_.shown + " could not be asked (" + why + ")");
  }
  template <class Fn>
  auto ask(Fn&& fn) -> std::invoke_result_t<Fn&, PgSession&> {
    return ask(fn, fn);  // idempotent: the same statement again
  }

  // A search whose coordinator stops polling is dropped this long after its last poll.
  static constexpr milliseconds kSearchTtl{600000};

  PgLocation where_;
  StoreOptions options_;
  QueueStatements sql_;
  std::mutex mutex_;
  std::unique_ptr<PgSession> session_;
};

}  // namespace

std::unique_ptr<WorkQueue> make_pg_work_queue(PgLocation where, const StoreOptions& options) {
  return std::make_unique<PgWorkQueue>(std::move(where), options);
}

}  // namespace tunekit::detail
