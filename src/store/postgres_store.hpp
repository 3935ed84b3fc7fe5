// The PostgreSQL store (DESIGN §8, docs/fleet.md): the same entries, evidence, identity
// fields, budget_cut, stale marks, bans and pending misses as the SQLite store, on a server a
// fleet of machines shares. A server lost mid-run turns the store memory-only with one
// warning; the writes made meanwhile are kept and written, in order, at the next write that
// reaches it again (and once more when the store is closed).
#pragma once

#include <string>

#include "tunekit/store.hpp"

namespace tunekit::detail {

// Writes kept while the server is unreachable; past this many, new ones are dropped (warned).
inline constexpr std::size_t kMaxKeptWrites = 10000;

// `spec` is the whole "postgresql://..." URL. A null store (after a warning naming the server,
// its password masked) when the server cannot be used.
StoreOpening open_postgres_store(const std::string& spec, const StoreOptions& options,
                                 const WarningSink& warn);

}  // namespace tunekit::detail
