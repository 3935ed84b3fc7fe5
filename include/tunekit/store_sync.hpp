// Copying what one store holds into another (`tunekit cache push` / `cache pull`,
// docs/fleet.md "Moving choices"): entries with every field, bans, pending misses. Both stores
// are opened by the caller (open_store_checked); the copy goes through the Store interface
// only, so any kind of store can be either side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/store.hpp"

namespace tunekit {

struct StoreSyncOptions {
  std::string op;                 // only this op's entries, bans and misses (empty: every op's)
  std::vector<std::string> what;  // digests or keys as `cache show` takes them (empty: all);
                                  // one that names nothing in the source is a UsageError
  KeyCanonicaliser canonical;     // reads a typed key as its op does (empty: stored text only)
  bool force = false;             // the source's entry replaces a newer one in the target
  bool dry_run = false;           // say what would happen, write nothing
  bool pending = true;            // move pending misses (false: leave them where they are)
  // Why the source cannot be written (empty: it can). Pending misses move (the target adds the
  // count, the source's record is removed), so a source that cannot lose them keeps them: a
  // copy that stayed behind would be counted again by the next copy.
  std::string source_read_only;
};

// What became of one entry of the source.
enum class SyncAction {
  copied,      // the target had no entry for the identity
  replaced,    // the target's entry was older (or --force) and differed
  unchanged,   // the target's entry is the same in every field: not rewritten
  kept_newer,  // the target's entry was created later: kept (--force replaces it)
  kept_stale,  // the same measurement, marked stale in the target: the mark is kept
  failed       // written, but the target did not keep it (its warning says why)
};
std::string_view to_string(SyncAction action);

struct SyncedEntry {
  std::string identity_digest;
  std::string op;
  std::string key;
  std::string scope;
  SyncAction action = SyncAction::copied;
  std::int64_t source_created_at = 0;
  std::int64_t target_created_at = 0;  // 0: the target had none
  bool stale = false;                  // the source's entry is stale (it travels as stale)
};

struct StoreSyncSummary {
  std::string from;  // the stores' specs as describe() gives them (passwords masked)
  std::string to;
  bool dry_run = false;
  bool force = false;
  std::vector<SyncedEntry> entries;  // the source's entries that were selected, by op and key
  std::size_t count(SyncAction action) const;
  std::size_t bans_copied = 0;        // bans the target lacked (one per identity and candidate)
  std::size_t bans_present = 0;       // bans the target had already: left as they are
  std::size_t bans_failed = 0;        // written, but not found in the target afterwards
  std::size_t pending_moved = 0;      // pending records moved (their counts added in the target)
  std::int64_t misses_moved = 0;      // the misses they counted
  std::size_t pending_left = 0;       // records left in the source (pending_left_why says why)
  std::string pending_left_why;       // "the source is read-only (...)", "--no-pending"
  std::size_t pending_failed = 0;     // not found in the target afterwards: left in the source
  std::size_t pending_unremoved = 0;  // in the target now, but still in the source too
  // Whether everything selected arrived: no entry, ban or pending record failed.
  bool complete() const;
};

// Copies the entries, bans and pending misses of `from` that `options` select into `to`:
// - an entry the target lacks is copied with every field (evidence, search record, scope,
//   budget_cut, created_at, version) and its stale mark; one the same in every field is left
//   (unchanged); a target entry created later than the source's is kept unless options.force;
//   otherwise the source's replaces it, except that the same measurement (same created_at)
//   marked stale only in the target keeps its mark (a stale mark is news about it; only a
//   newer measurement or --force clears it);
// - bans are unioned: one per identity and candidate, a ban the target has is left as it is;
// - pending misses move: the target adds each record's count, and the source's record is
//   removed once the target lists it, so copying twice never counts a miss twice.
// Every write is checked by reading the target back; what it did not keep is `failed`.
// The same Store object on both sides is a UsageError; different objects naming the same store
// are the caller's to refuse (same_store).
StoreSyncSummary sync_store(Store& from, Store& to, const StoreSyncOptions& options);

// What sync_store would do into a store that does not exist yet (`--dry-run` of a copy that
// would create it): every selected entry and ban copied, every pending record moved. Writes
// nothing, whatever options.dry_run says.
StoreSyncSummary plan_sync_into_new(Store& from, const StoreSyncOptions& options);

// Whether two specs name the same store: the same SQLite file (through links and relative
// paths), or the same PostgreSQL server, port, database and tunekit_schema (localhost,
// 127.0.0.1, ::1 and a local socket count as one host). A malformed spec is a UsageError.
bool same_store(std::string_view spec_a, std::string_view spec_b);

}  // namespace tunekit
