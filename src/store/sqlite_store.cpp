#include "store/sqlite_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

constexpr int kBusyTimeoutMs = 10000;

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
  tunekit_version TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS choices_op ON choices(op);
)sql";

const char* const kColumns =
    "identity_digest, op, key, key_digest, device, toolchain, environment, numerics_policy, "
    "candidates, winner, winner_config, evidence, measured, budget_cut, created_at, "
    "tunekit_version";

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      throw std::runtime_error(sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() { return stmt_; }
  void bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  std::string text(int col) {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : "";
  }
  std::int64_t integer(int col) { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

StoredChoice read_row(Statement& s) {
  StoredChoice c;
  c.identity_digest = s.text(0);
  c.op = s.text(1);
  c.key = s.text(2);
  c.key_digest = s.text(3);
  c.device = s.text(4);
  c.toolchain = s.text(5);
  c.environment = s.text(6);
  c.numerics_policy = s.text(7);
  c.candidates = s.text(8);
  c.winner = s.text(9);
  c.winner_config = s.text(10);
  c.evidence = s.text(11);
  c.measured = s.integer(12) != 0;
  c.budget_cut = s.integer(13) != 0;
  c.created_at = s.integer(14);
  c.tunekit_version = s.text(15);
  return c;
}

// Runs fn until it stops failing with SQLITE_BUSY/LOCKED (bounded): several processes share
// the file and "database is locked" must not reach the user.
template <class Fn>
int with_retry(Fn&& fn) {
  int rc = SQLITE_OK;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int attempt = 0;; ++attempt) {
    rc = fn();
    if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline)
      return rc;
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + attempt % 20));
  }
}

class SqliteStore final : public Store {
 public:
  SqliteStore(sqlite3* db, std::string path, WarningSink warn)
      : db_(db), path_(std::move(path)), warn_(std::move(warn)) {}
  ~SqliteStore() override { sqlite3_close(db_); }

  std::string describe() const override { return "sqlite:" + path_; }

  std::optional<StoredChoice> find(std::string_view identity_digest) override {
    std::string sql = std::string("SELECT ") + kColumns + " FROM choices WHERE identity_digest = ?";
    try {
      Statement s(db_, sql.c_str());
      s.bind(1, identity_digest);
      int rc = with_retry([&] { return sqlite3_step(s.get()); });
      if (rc == SQLITE_ROW) return read_row(s);
      if (rc != SQLITE_DONE) warn("reading", sqlite3_errmsg(db_));
    } catch (const std::exception& e) {
      warn("reading", e.what());
    }
    return std::nullopt;
  }

  void put(const StoredChoice& c) override {
    std::string sql = std::string("INSERT OR REPLACE INTO choices(") + kColumns +
                      ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    try {
      Statement s(db_, sql.c_str());
      int i = 1;
      for (std::string_view t :
           {c.identity_digest, c.op, c.key, c.key_digest, c.device, c.toolchain, c.environment,
            c.numerics_policy, c.candidates, c.winner, c.winner_config, c.evidence})
        s.bind(i++, t);
      s.bind(i++, std::int64_t{c.measured});
      s.bind(i++, std::int64_t{c.budget_cut});
      s.bind(i++, c.created_at);
      s.bind(i++, c.tunekit_version);
      int rc = with_retry([&] {
        int r = sqlite3_step(s.get());
        if (r == SQLITE_BUSY || r == SQLITE_LOCKED) sqlite3_reset(s.get());
        return r;
      });
      if (rc != SQLITE_DONE) warn("writing", sqlite3_errmsg(db_));
    } catch (const std::exception& e) {
      warn("writing", e.what());
    }
  }

  std::vector<StoredChoice> list(std::string_view op) override {
    std::vector<StoredChoice> out;
    std::string sql = std::string("SELECT ") + kColumns + " FROM choices" +
                      (op.empty() ? "" : " WHERE op = ?") + " ORDER BY op, key";
    try {
      Statement s(db_, sql.c_str());
      if (!op.empty()) s.bind(1, op);
      int rc;
      while ((rc = with_retry([&] { return sqlite3_step(s.get()); })) == SQLITE_ROW)
        out.push_back(read_row(s));
      if (rc != SQLITE_DONE) warn("listing", sqlite3_errmsg(db_));
    } catch (const std::exception& e) {
      warn("listing", e.what());
    }
    return out;
  }

  std::size_t remove(std::string_view what) override {
    try {
      Statement s(db_,
                  "DELETE FROM choices WHERE identity_digest = ?1 OR key_digest = ?1 OR key = ?1 "
                  "OR op = ?1");
      s.bind(1, what);
      int rc = with_retry([&] {
        int r = sqlite3_step(s.get());
        if (r == SQLITE_BUSY || r == SQLITE_LOCKED) sqlite3_reset(s.get());
        return r;
      });
      if (rc != SQLITE_DONE) {
        warn("removing from", sqlite3_errmsg(db_));
        return 0;
      }
      return static_cast<std::size_t>(sqlite3_changes(db_));
    } catch (const std::exception& e) {
      warn("removing from", e.what());
      return 0;
    }
  }

 private:
  void warn(std::string_view doing, std::string_view why) {
    if (warn_) {
      warn_("tunekit: " + std::string(doing) + " the store " + path_ +
            " failed: " + std::string(why) + "; the choice stays in memory for this session");
    }
  }

  sqlite3* db_;
  std::string path_;
  WarningSink warn_;
};

// Single-value query; nullopt (and the SQLite error in `error`) on failure.
std::optional<std::string> query_one(sqlite3* db, const char* sql, std::string& error) {
  sqlite3_stmt* s = nullptr;
  std::optional<std::string> out;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
    error = sqlite3_errmsg(db);
    return std::nullopt;
  }
  int rc = with_retry([&] { return sqlite3_step(s); });
  if (rc == SQLITE_ROW) {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    out = p ? p : "";
  } else if (rc == SQLITE_DONE) {
    out = "";
  } else {
    error = sqlite3_errmsg(db);
  }
  sqlite3_finalize(s);
  return out;
}

// Checks an existing file without writing to it. Returns an empty string when it is a usable
// tunekit store (or an empty database), else why not.
std::string why_unusable(sqlite3* db) {
  std::string error;
  auto app_id = query_one(db, "PRAGMA application_id", error);
  if (!app_id) return "not a tunekit store or corrupt (" + error + ")";
  auto tables = query_one(db, "SELECT count(*) FROM sqlite_master", error);
  if (!tables) return "not a tunekit store or corrupt (" + error + ")";
  if (*tables == "0" && *app_id == "0") return {};  // a new, empty database
  if (*app_id != std::to_string(kStoreApplicationId)) {
    // Another process may be initialising the file right now: the meta table is the mark.
    auto ours = query_one(
        db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='tunekit_meta'", error);
    if (!ours) return "not a tunekit store or corrupt (" + error + ")";
    if (*app_id != "0" || *ours == "0") return "not a tunekit store";
  }
  auto version =
      query_one(db, "SELECT value FROM tunekit_meta WHERE name = 'schema_version'", error);
  if (!version) return "not a tunekit store or corrupt (" + error + ")";
  if (version->empty()) return "not a tunekit store (no schema version)";
  int v = std::atoi(version->c_str());
  if (v > kStoreSchemaVersion) {
    return "written by a newer tunekit (schema " + *version + ", this one reads " +
           std::to_string(kStoreSchemaVersion) + ")";
  }
  auto check = query_one(db, "PRAGMA quick_check", error);
  if (!check) return "corrupt (" + error + ")";
  if (*check != "ok") return "corrupt (" + *check + ")";
  return {};
}

bool exec(sqlite3* db, const std::string& sql, std::string& error) {
  char* msg = nullptr;
  int rc = with_retry([&] {
    sqlite3_free(msg);
    msg = nullptr;
    return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
  });
  if (rc != SQLITE_OK) error = msg ? msg : sqlite3_errstr(rc);
  sqlite3_free(msg);
  return rc == SQLITE_OK;
}

}  // namespace

std::unique_ptr<Store> open_sqlite_store(const std::string& path, const WarningSink& warn) {
  auto fail = [&](const std::string& why) -> std::unique_ptr<Store> {
    if (warn) {
      warn("tunekit: the store " + path + " is " + why +
           "; running memory-only (the file is left as it is)");
    }
    return nullptr;
  };
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path file(path);
  if (file.has_parent_path() && !fs::exists(file.parent_path(), ec)) {
    fs::create_directories(file.parent_path(), ec);
    if (ec) return fail("not creatable (" + ec.message() + ")");
    fs::permissions(file.parent_path(), fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  if (!fs::exists(file, ec)) {
    // Create it 0600 before SQLite does (SQLite would use the umask); -wal/-shm follow it.
    int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return fail("not creatable");
    ::close(fd);
  } else if (fs::is_directory(file, ec)) {
    return fail("a directory");
  }

  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return fail("not openable (" + why + ")");
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  if (std::string why = why_unusable(db); !why.empty()) {
    sqlite3_close(db);
    return fail(why);
  }
  std::string error;
  const std::string init =
      std::string("PRAGMA journal_mode=WAL; BEGIN IMMEDIATE; PRAGMA application_id=") +
      std::to_string(kStoreApplicationId) + ";" + kSchema +
      "INSERT OR IGNORE INTO tunekit_meta(name, value) VALUES('schema_version', '" +
      std::to_string(kStoreSchemaVersion) + "'); COMMIT;";
  if (!exec(db, init, error)) {
    exec(db, "ROLLBACK", error);
    sqlite3_close(db);
    return fail("not initialisable (" + error + ")");
  }
  exec(db, "PRAGMA synchronous=NORMAL", error);
  return std::make_unique<SqliteStore>(db, path, warn);
}

}  // namespace tunekit::detail
