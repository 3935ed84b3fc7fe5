// Opening an SQLite store file (src/store/sqlite_store.cpp serves it): what a file holds
// (SqliteProbe: ours, empty, another program's, newer, corrupt, locked), and creating the
// schema or migrating an older one in place, in one transaction.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "store/sqlite_connection.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

// What stands between a file and a usable store; ready when nothing does.
struct SqliteProblem {
  StoreState state = StoreState::ready;
  std::string why;
  bool ok() const { return state == StoreState::ready; }
};

// What the checks found in an existing file (read only: nothing is written).
struct SqliteProbe {
  SqliteProblem problem;
  bool empty = false;        // a new database: no tables, no application id
  bool initialised = false;  // ours (at `version`)
  int version = 0;           // the schema version it was written with (0: none yet)
  bool wal = false;
};

// An open connection to a store file and what the checks found in it.
struct SqliteOpened {
  std::unique_ptr<Connection> c;
  SqliteProbe found;
};

// Connects to `path` (read-only or read-write, busy waits up to `wait`) and probes it; a
// read-only file whose -shm this user cannot create is read as immutable where that is exact.
SqliteOpened connect_and_probe(const std::string& path, bool read_only,
                               std::chrono::milliseconds wait);

// Writes only what is missing: an initialised WAL store of this version is opened without
// taking the write lock, so a store another process is writing is still read at once.
SqliteProblem initialise_store(Connection& c, const SqliteProbe& found,
                               std::chrono::milliseconds wait);

}  // namespace tunekit::detail
