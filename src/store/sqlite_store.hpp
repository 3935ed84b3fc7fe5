// The embedded SQLite store: WAL, busy timeout, a schema version table, 0700/0600 files.
#pragma once

#include <memory>
#include <string>

#include "tunekit/store.hpp"

namespace tunekit::detail {

inline constexpr int kStoreSchemaVersion = 1;
inline constexpr int kStoreApplicationId = 0x544b4954;  // "TKIT"

// nullptr (after a warning naming the file) when the file is not a usable tunekit store.
std::unique_ptr<Store> open_sqlite_store(const std::string& path, const WarningSink& warn);

}  // namespace tunekit::detail
