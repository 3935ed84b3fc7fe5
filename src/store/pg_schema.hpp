// The PostgreSQL store's tables (docs/formats.md): where they live (a PostgreSQL schema, by
// default "tunekit"), the schema version table and the migrations that bring an older schema
// to this one. Creation and migration run in one transaction under an advisory lock, so two
// processes opening a new server at once do not collide.
#pragma once

#include <string>

#include "store/pg_session.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

// 1: entries (with stale marks), bans and pending misses, as the SQLite store's schema 2.
// 2: tuning leases, as the SQLite store's schema 3.
// 3: shared searches and their work items (the SQLite store has none).
inline constexpr int kPgSchemaVersion = 3;

// A spec split into what libpq reads and what tunekit reads from it.
struct PgLocation {
  std::string url;     // for libpq: the spec without tunekit's own parameters
  std::string schema;  // tunekit_schema=NAME, default "tunekit"
  std::string shown;   // the spec with its password masked
};

// Reads tunekit_schema=NAME out of the URL's query (NAME: a lower-case letter or '_', then
// up to 62 lower-case letters, digits or '_'); anything else is a UsageError.
PgLocation pg_location(const std::string& spec);

// "\"schema\".table"
std::string pg_table(const std::string& schema, const char* table);

struct PgSchemaState {
  StoreState state = StoreState::ready;  // ready, missing, newer_schema, not_a_store,
                                         // not_creatable
  std::string why;
  int version = kPgSchemaVersion;  // older only when ready but read_only_why says why
  std::string read_only_why;       // ready at an older version this role may not migrate
};

// Checks the schema's version and, when `create`, creates or migrates it. Connection
// failures propagate as PgError.
PgSchemaState ensure_pg_schema(PgSession& session, const std::string& schema, bool create);

}  // namespace tunekit::detail
