// The embedded SQLite store: WAL, bounded waits on a busy file, a schema version table,
// 0700/0600 files, read-only files served read-only.
#pragma once

#include <string>

#include "tunekit/store.hpp"

namespace tunekit::detail {

// 2: entries may be stale; bans and pending misses. 3: tuning leases (sqlite_leases.hpp).
// A file of an older schema is migrated in place.
inline constexpr int kStoreSchemaVersion = 3;
inline constexpr int kStoreApplicationId = 0x544b4954;  // "TKIT"

// A null store (after a warning naming the file and the state) when the file is not usable.
StoreOpening open_sqlite_store(const std::string& path, const StoreOptions& options,
                               const WarningSink& warn);

}  // namespace tunekit::detail
