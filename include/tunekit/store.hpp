// Store: persistent choices per identity (DESIGN §8). An interface of a few methods; the
// embedded SQLite store is the default. Stores are opened by a spec string:
//   "sqlite:/path/to/file.db"   "none" or "memory" (memory only: no store)
// A bare "sqlite" is not a spec open_store takes (it is a UsageError); the CLI resolves it,
// and an empty --store, to "sqlite:" + default_store_path(...) before opening.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/identity.hpp"

namespace tunekit {

// One stored decision: the identity in clear and as a digest, the winner, the evidence.
struct StoredChoice {
  std::string identity_digest;  // hex of Identity::digest()
  std::string op;
  std::string key;          // text form
  std::string key_digest;   // hex
  std::string device;       // JSON object: the device identity fields
  std::string toolchain;    // JSON object
  std::string environment;  // JSON object of tags
  std::string numerics_policy;
  std::string candidates;     // candidate-set checksum, hex
  std::string winner;         // candidate name
  std::string winner_config;  // Config text
  std::string evidence;       // JSON array: every candidate's reading or classified failure
  bool measured = true;
  bool budget_cut = false;
  std::int64_t created_at = 0;  // unix seconds
  std::string tunekit_version;
};

// The entry recording `winner` (its Config text `winner_config`) as the measured choice for
// `identity`: every field filled, the identity columns in clear (device, toolchain and
// environment as JSON objects, digests as hex), `evidence` (a JSON array) as given,
// created_at now (unix seconds), tunekit_version from identity.toolchain, measured true.
StoredChoice make_stored_choice(const Identity& identity, std::string winner,
                                std::string winner_config, std::string evidence, bool budget_cut);

using WarningSink = std::function<void(std::string_view)>;

class Store {
 public:
  virtual ~Store() = default;
  virtual std::string describe() const = 0;  // e.g. "sqlite:/home/u/.cache/tunekit/choices.db"
  virtual std::optional<StoredChoice> find(std::string_view identity_digest) = 0;
  // Inserts or replaces the entry with the same identity digest.
  virtual void put(const StoredChoice& choice) = 0;
  // Every entry, or those of one op (empty: all).
  virtual std::vector<StoredChoice> list(std::string_view op = {}) = 0;
  // Removes entries whose identity digest, key digest or key text equals `what`, or (when
  // `what` is an op name) every entry of that op. Returns how many were removed.
  virtual std::size_t remove(std::string_view what) = 0;
};

// The default store file: $TUNEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tunekit, else
// ~/.cache/tunekit; file choices.db. `getenv` is a parameter (read once, at the edge).
std::string default_store_path(const std::function<const char*(const char*)>& getenv);

// Opens a store by spec. A file that is not a tunekit store, is corrupt, or has a newer
// schema is reported through `warn` (naming the file) and nullptr is returned: the caller
// runs memory-only and the file is not modified. A malformed spec is a UsageError.
std::unique_ptr<Store> open_store(std::string_view spec, const WarningSink& warn);

}  // namespace tunekit
