// Store: persistent choices per identity (DESIGN §8). An interface of a few methods; the
// embedded SQLite store is the default. Stores are opened by a spec string, parsed in one
// place (the store kinds are registered by name, src/store/store_registry.cpp):
//   "sqlite:/path/to/file.db"   "postgresql://user@host:5432/db" (docs/fleet.md)
//   "none" or "memory" (memory only: no store)
// A bare "sqlite" is not a spec open_store takes (it is a UsageError); the CLI resolves it,
// and an empty --store, to "sqlite:" + default_store_path(...) before opening.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/identity.hpp"
#include "tunekit/report.hpp"
#include "tunekit/work_queue.hpp"

namespace tunekit {

// How the search behind a stored winner ran (TuneReport's strategy, schedule, seed, stop
// reason and budget), kept beside the evidence so `cache show` can say what was explored.
struct SearchRecord {
  std::string strategy;
  std::string schedule;
  std::uint64_t seed = 0;
  std::size_t space_size = 0;  // candidates the op has
  // Of them, the points that compute differently for the key (TuneReport::distinct_points);
  // 0 for older entries.
  std::size_t distinct_points = 0;
  std::size_t evaluated = 0;  // candidates the search touched
  std::string stop_reason;
  BudgetReport budget;
  // A bucketed op's entry: the bucket it serves ("n: 65..128 (pow2)"), measured at its upper
  // bound (the entry's key). Empty: an exact key.
  std::string bucket;
  // How sure the decision was (TuneReport::confidence); absent for older entries and imports.
  std::optional<DecisionConfidence> confidence;
  // The final race (TuneReport::final_race); empty for older entries.
  FinalRace final_race;
  // Where the host ran two CPUs around the search (TuneReport::cpu_placement); unmeasured for
  // older entries, imports and devices that cannot tell.
  CpuPlacement cpu_placement;
};

// The search record of a report.
SearchRecord search_record(const TuneReport& report);

// One stored decision: the identity in clear and as a digest, the winner, the evidence.
struct StoredChoice {
  std::string identity_digest;  // hex of Identity::digest()
  std::string op;
  std::string key;         // text form
  std::string key_digest;  // hex
  DeviceIdentity device;   // `known` is true when the stored device names a product
  Toolchain toolchain;
  EnvironmentTags environment;
  std::string numerics_policy;
  std::string candidates;        // candidate-set checksum, hex
  std::string scope = "kernel";  // Identity::scope: a kernel choice, or a stack decision's scope
  std::string winner;            // candidate name
  std::string winner_config;     // Config text
  // Every candidate's reading or classified failure, in evaluation order.
  std::vector<CandidateReport> evidence;
  // How the search ran; absent for entries stored before it was recorded, and for imports.
  std::optional<SearchRecord> search;
  bool measured = true;
  bool budget_cut = false;
  // Why the entry no longer serves (its winner failed re-validation, or failed live); kept as
  // evidence. Empty: it serves. A later put() for the identity replaces it (and clears this).
  std::string stale;
  std::int64_t created_at = 0;  // unix seconds
  std::string tunekit_version;
};

// The entry recording `winner` (its Config text `winner_config`) as the measured choice for
// `identity`: every field filled, the identity parts copied (digests as hex), `evidence` and
// `search` as given, created_at now (unix seconds), tunekit_version from identity.toolchain,
// measured true.
StoredChoice make_stored_choice(const Identity& identity, std::string winner,
                                std::string winner_config, std::vector<CandidateReport> evidence,
                                bool budget_cut, std::optional<SearchRecord> search = {});

// A candidate that failed live for an identity (DESIGN §7): never chosen again for it.
struct BannedCandidate {
  std::string identity_digest;  // hex of Identity::digest()
  std::string op;
  std::string key;             // text form
  std::string candidate;       // name
  std::string reason;          // the error it raised
  std::int64_t banned_at = 0;  // unix seconds
};

// A key that was served without a known choice (mode cached, or a tune with recording on),
// kept so it can be tuned later on this machine (`tunekit tune --pending`).
struct PendingMiss {
  std::string identity_digest;  // hex of Identity::digest()
  std::string op;
  std::string key;          // text form
  std::string candidates;   // candidate-set checksum, hex
  std::string device;       // JSON object: the device identity fields
  std::string environment;  // JSON object of tags
  std::string numerics_policy;
  std::int64_t count = 1;       // misses recorded (record_miss adds this many)
  std::int64_t first_seen = 0;  // unix seconds
  std::int64_t last_seen = 0;
};

// The record of a miss of `identity`: every field filled, count 1, first/last seen now.
PendingMiss make_pending_miss(const Identity& identity);

// The fewest hex digits of an identity digest that name an entry (`cache show 3fa2b1`).
inline constexpr std::size_t kMinDigestPrefix = 6;

// Whether `what` names `identity_digest`: the whole digest, or a prefix of at least
// kMinDigestPrefix hex digits (either case).
bool names_identity(std::string_view identity_digest, std::string_view what);

// The entries `what` names by digest: an identity digest (full, or a prefix as
// names_identity takes it) or a key digest; empty when it is not hex or names none. A prefix
// that more than one entry's identity digest starts with is a UsageError listing them.
std::vector<const StoredChoice*> find_by_digest(const std::vector<StoredChoice>& entries,
                                                std::string_view what);

// The key text an entry of `op` is stored under for a key typed as `typed` ("n=1000"): what
// the op's parser makes of it (defaults filled, fields ordered; a bucketed op's bucket key), or
// nullopt where it does not parse. The CLI gives one that knows the built-in ops.
using KeyCanonicaliser =
    std::function<std::optional<std::string>(const std::string& op, const std::string& typed)>;

// How find_stored reads what a user typed.
struct StoredLookup {
  bool digests = true;         // an identity digest (or a prefix), or a key digest
  bool ops = false;            // an op name names all its entries
  std::string op;              // only this op's entries (empty: every op's)
  KeyCanonicaliser canonical;  // empty: a key matches its stored text only
};

// Whether the key typed as `typed` names the key `stored_key` of an entry of `op`: the same
// text, or the same once `canonical` has read it for the op.
bool names_key(const std::string& op, const std::string& stored_key, const std::string& typed,
               const KeyCanonicaliser& canonical);

// The entries `what` names, each once: by digest (as find_by_digest, with `how.digests`), by
// op name (with `how.ops`), or by key (names_key). Empty when it names none.
std::vector<const StoredChoice*> find_stored(const std::vector<StoredChoice>& entries,
                                             const std::string& what, const StoredLookup& how);

// A tuning lease (docs/fleet.md "Leases"): one tuner per identity across the processes and
// machines that share a store. The first process to miss an identity takes its lease, renews
// it while it searches, and releases it once the choice is stored; a holder killed without
// releasing loses it when it expires. Expiry is judged by the store's clock (the server's
// now() for PostgreSQL, this machine's for SQLite), so machines' clocks never have to agree.
struct TuningLease {
  std::string identity_digest;     // hex of Identity::digest()
  std::string op;                  // what it is a lease for, for listings
  std::string key;                 // text form
  std::string holder;              // who holds it: "host:pid:start:n" (lease_holder_name)
  std::int64_t taken_at_ms = 0;    // unix milliseconds, the store's clock
  std::int64_t expires_at_ms = 0;  // unix milliseconds, the store's clock
};

// What take_lease found.
enum class LeaseState {
  held,        // the caller holds it now (new, taken over from an expired holder, or its own)
  busy,        // another holder's lease is live: `current` says whose, and until when
  unavailable  // the store could not be asked (memory-only, read-only, server away): no
               // exclusion; the caller tunes as if no store were shared
};
std::string_view to_string(LeaseState state);

struct LeaseTaking {
  LeaseState state = LeaseState::unavailable;
  TuningLease current;  // held: the caller's lease; busy: the other holder's
  std::string why;      // unavailable: the cause
};

// A name for this process's leases, unique across machines and process restarts: the host
// name, the pid, the process's start time and `n` (one per Tuner in a process).
std::string lease_holder_name(std::uint64_t n);
// Whether `holder` (a lease_holder_name) names a process of this host that no longer runs:
// its pid is gone, or the pid now belongs to a process started at another time. A holder of
// another host, or a name not of that form, is never judged gone (its lease expires instead).
bool lease_holder_is_gone(std::string_view holder);

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

  // Keeps the entry as evidence but stops serving it: find() and list() return it with
  // `stale` set to `reason`. No entry: nothing happens.
  virtual void mark_stale(std::string_view identity_digest, std::string_view reason) = 0;
  // Records a ban (one per identity and candidate: a second replaces the reason and time).
  virtual void ban(const BannedCandidate& ban) = 0;
  // The bans of one identity (empty digest: every ban).
  virtual std::vector<BannedCandidate> bans(std::string_view identity_digest = {}) = 0;
  // Adds a miss: a new record, or the count added to the existing one (last_seen updated).
  virtual void record_miss(const PendingMiss& miss) = 0;
  // The pending misses, or those of one op (empty: all), oldest first.
  virtual std::vector<PendingMiss> pending(std::string_view op = {}) = 0;
  // Removes the pending record of an identity; returns how many were removed (0 or 1).
  virtual std::size_t remove_pending(std::string_view identity_digest) = 0;

  // Takes the lease of `wanted.identity_digest` for `wanted.holder` (op and key as given),
  // expiring `ttl` from now by the store's clock, unless another holder's lease is live: one
  // atomic step, so of any number of processes asking at once exactly one is answered held.
  // An expired lease is taken over; the holder's own live lease is renewed.
  virtual LeaseTaking take_lease(const TuningLease& wanted, std::chrono::milliseconds ttl) = 0;
  // Pushes the holder's lease out to `ttl` from now. false: it is not the holder's any more
  // (it expired and another took it, or it was released) or the store could not be asked.
  virtual bool renew_lease(std::string_view identity_digest, std::string_view holder,
                           std::chrono::milliseconds ttl) = 0;
  // Drops the holder's lease (another holder's is left alone; none: nothing happens).
  virtual void release_lease(std::string_view identity_digest, std::string_view holder) = 0;
  // Every lease the store has, live or expired (expired ones are taken over, not deleted,
  // until released), by identity digest.
  virtual std::vector<TuningLease> leases() = 0;
  // The store's clock, unix milliseconds (what expires_at_ms is compared with).
  virtual std::int64_t now_ms() = 0;

  // The queue of shared searches on this store (work_queue.hpp), on a connection of its own;
  // nullptr when the store cannot hold one, with `why` saying so. A server store has one; a
  // file store does not (a search shared on one machine gains nothing a device would not).
  virtual std::unique_ptr<WorkQueue> open_work_queue(std::string& why) {
    why = "shared searches need a server store (postgresql://...); " + describe() + " is not one";
    return nullptr;
  }
};

// How a store file is opened (DESIGN §8). TunerOptions::persist.store_options;
// store_options_from_environment reads TUNEKIT_STORE_WAIT_MS and TUNEKIT_TRUST_STORE.
struct StoreOptions {
  // How long an operation waits for a store another process has locked. Past it the store is
  // used memory-only for the rest of the session (reads and writes after a read timed out,
  // writes after a write timed out), with one warning naming the cause. Reads are kept short
  // because `--mode cached` must not stall; a write waits longer because other tunekit
  // processes hold the lock only for the milliseconds of one insert.
  std::chrono::milliseconds read_wait{2000};
  std::chrono::milliseconds write_wait{5000};
  // Use a store whose directory others can write to, or whose file another user owns (by
  // default such a store is refused with a warning: a planted store would serve its owner's
  // choices).
  bool trust = false;
  // Create a missing store file (and its directory, 0700). false: a missing file is
  // StoreState::missing and nothing is created.
  bool create = true;
};

// What opening a store found. Every state but ready and read_only comes with no store (the
// caller runs memory-only); every one but ready, none and missing also with a warning naming
// the file and what to do.
enum class StoreState {
  ready,          // opened read-write
  read_only,      // the user cannot write the file or its directory: stored choices are served,
                  // new ones stay in memory (one warning at the first one)
  none,           // the spec asked for no store ("none", "memory")
  missing,        // no file, and StoreOptions::create was false
  locked,         // another process held a lock past read_wait (write_wait while creating)
  unreadable,     // permission denied on the file or its directory
  not_a_store,    // not SQLite, another application's database, corrupt or truncated
  newer_schema,   // written by a newer tunekit
  untrusted,      // others can write the directory or the file, or the file is another user's
  not_a_file,     // a directory, FIFO, device, socket or dangling symlink sits at the path
  not_creatable,  // missing and could not be created
  unreachable     // a store server that could not be connected to (refused, timed out, DNS)
};
std::string_view to_string(StoreState state);

struct StoreOpening {
  std::unique_ptr<Store> store;
  StoreState state = StoreState::none;
  std::string why;      // the cause alone: "locked by another process (...)", "a FIFO, ..."
  std::string message;  // the warning given, naming the file (empty for ready and none; for
                        // read_only the cause, warned only at the first new choice)
};

// Opens a store by spec and says what it found; the message (when any) is also given to
// `warn`. A malformed spec is a UsageError.
StoreOpening open_store_checked(std::string_view spec, const StoreOptions& options,
                                const WarningSink& warn);

// TUNEKIT_STORE_WAIT_MS ("READ" or "READ,WRITE" milliseconds, each 0..600000) and
// TUNEKIT_TRUST_STORE ("1" trusts, "0" or unset does not). A malformed value is a UsageError
// naming the variable. `getenv` is a parameter (read once, at the edge).
StoreOptions store_options_from_environment(const std::function<const char*(const char*)>& getenv);

// TUNEKIT_STORE when set (a spec as open_store takes it: "postgresql://host/db"), else
// "sqlite:" + default_store_path(getenv). `getenv` is a parameter (read once, at the edge).
std::string store_spec_from_environment(const std::function<const char*(const char*)>& getenv);

// A spec as messages and listings show it: a password in a URL replaced by "***".
std::string shown_store_spec(std::string_view spec);

// The file an "sqlite:PATH" spec names; empty for any other spec. A malformed spec is a
// UsageError.
std::string store_file_of(std::string_view spec);

// The default store file: $TUNEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tunekit, else
// ~/.cache/tunekit; file choices.db. `getenv` is a parameter (read once, at the edge).
std::string default_store_path(const std::function<const char*(const char*)>& getenv);

// Opens a store by spec. A file that is not a tunekit store, is corrupt, has a newer schema,
// is locked past options.read_wait, or is refused (see StoreState) is reported through `warn`
// (naming the file) and nullptr is returned: the caller runs memory-only and the file is not
// modified. A malformed spec is a UsageError.
std::unique_ptr<Store> open_store(std::string_view spec, const WarningSink& warn,
                                  const StoreOptions& options = {});

}  // namespace tunekit
