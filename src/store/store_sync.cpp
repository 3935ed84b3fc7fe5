// sync_store and same_store (tunekit/store_sync.hpp): one store's entries, bans and pending
// misses copied into another through the Store interface, every write read back.
#include "tunekit/store_sync.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "store/pg_schema.hpp"
#include "store/store_registry.hpp"
#include "store/store_rows.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

// ---------------------------------------------------------------------------------------------
// Comparing entries as the stores write them

// Every stored field but the stale mark, in the form the stores keep (store_rows.hpp): two
// entries equal here are one measurement.
bool same_stored_measurement(const StoredChoice& a, const StoredChoice& b) {
  return detail::choice_texts(a) == detail::choice_texts(b) && a.measured == b.measured &&
         a.budget_cut == b.budget_cut && a.created_at == b.created_at &&
         a.tunekit_version == b.tunekit_version;
}

// A stale mark as a store keeps it (mark_stale gives an empty reason a text).
std::string stale_as_kept(const std::string& stale) {
  return stale.empty() ? stale : std::string(detail::stale_reason(stale));
}

bool same_stored_entry(const StoredChoice& source, const StoredChoice& target) {
  return same_stored_measurement(source, target) && stale_as_kept(source.stale) == target.stale;
}

SyncAction sync_action_for(const StoredChoice& source, const StoredChoice* target, bool force) {
  if (!target) return SyncAction::copied;
  if (same_stored_entry(source, *target)) return SyncAction::unchanged;
  if (force) return SyncAction::replaced;
  if (target->created_at > source.created_at) return SyncAction::kept_newer;
  if (same_stored_measurement(source, *target) && source.stale.empty())
    return SyncAction::kept_stale;
  return SyncAction::replaced;
}

// ---------------------------------------------------------------------------------------------
// What the options select

struct SyncSelection {
  std::vector<const StoredChoice*> entries;
  std::vector<BannedCandidate> bans;
  std::vector<PendingMiss> pending;
};

class SyncSelector {
 public:
  SyncSelector(const StoreSyncOptions& options, const std::vector<StoredChoice>& entries)
      : options_(options), used_(options.what.size(), false) {
    StoredLookup how;
    how.op = options.op;
    how.canonical = options.canonical;
    for (std::size_t i = 0; i < options.what.size(); ++i) {
      for (const StoredChoice* c : find_stored(entries, options.what[i], how)) {
        used_[i] = true;
        if (chosen_.insert(c->identity_digest).second) entries_.push_back(c);
      }
    }
    if (options.what.empty()) {
      for (const StoredChoice& c : entries)
        if (chosen_.insert(c.identity_digest).second) entries_.push_back(&c);
    }
  }

  // A ban or a pending record goes when its op passes the filter and its identity's entry was
  // chosen, or a word names it (its identity digest or its key).
  bool wants(const std::string& digest, const std::string& op, const std::string& key) {
    if (!options_.op.empty() && op != options_.op) return false;
    if (options_.what.empty() || chosen_.count(digest)) return true;
    bool named = false;
    for (std::size_t i = 0; i < options_.what.size(); ++i) {
      const std::string& w = options_.what[i];
      if (!names_identity(digest, w) && !names_key(op, key, w, options_.canonical)) continue;
      used_[i] = true;
      named = true;
    }
    return named;
  }

  // The first word that named nothing, as a UsageError.
  void check_all_used(const std::string& from) const {
    for (std::size_t i = 0; i < used_.size(); ++i) {
      if (used_[i]) continue;
      throw UsageError(fmt::format(
          "nothing in {} matches '{}'{}: give an identity digest (or a prefix of at least {} hex "
          "digits), a key digest or a key such as n=1000,dtype=f32; 'tunekit cache ls --store "
          "{}' lists what it holds",
          from, options_.what[i], options_.op.empty() ? "" : " of op " + options_.op,
          kMinDigestPrefix, from));
    }
  }

  std::vector<const StoredChoice*> take_entries() { return std::move(entries_); }

 private:
  const StoreSyncOptions& options_;
  std::vector<bool> used_;
  std::set<std::string> chosen_;
  std::vector<const StoredChoice*> entries_;
};

SyncSelection select_for_sync(Store& from, const std::vector<StoredChoice>& entries,
                              const StoreSyncOptions& options, const std::string& shown_from) {
  SyncSelector selector(options, entries);
  SyncSelection s;
  s.entries = selector.take_entries();
  for (BannedCandidate& b : from.bans())
    if (selector.wants(b.identity_digest, b.op, b.key)) s.bans.push_back(std::move(b));
  for (PendingMiss& m : from.pending(options.op))
    if (selector.wants(m.identity_digest, m.op, m.key)) s.pending.push_back(std::move(m));
  selector.check_all_used(shown_from);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Entries

std::map<std::string, StoredChoice> entries_by_digest(std::vector<StoredChoice> entries) {
  std::map<std::string, StoredChoice> out;
  for (StoredChoice& c : entries) {
    std::string digest = c.identity_digest;
    out.emplace(std::move(digest), std::move(c));
  }
  return out;
}

bool action_writes(SyncAction action) {
  return action == SyncAction::copied || action == SyncAction::replaced;
}

void write_entry(Store& to, const StoredChoice& source, const StoredChoice* target) {
  // The same measurement gaining a stale mark needs only the mark; put() would clear it.
  const bool only_mark =
      target && same_stored_measurement(source, *target) && !source.stale.empty();
  if (!only_mark) to.put(source);
  if (!source.stale.empty()) to.mark_stale(source.identity_digest, source.stale);
}

// `to` null: a target that does not exist yet (a dry run).
void sync_entries(Store* to, const std::vector<const StoredChoice*>& chosen,
                  const StoreSyncOptions& options, StoreSyncSummary& out) {
  const std::map<std::string, StoredChoice> before =
      to ? entries_by_digest(to->list(options.op)) : std::map<std::string, StoredChoice>();
  for (const StoredChoice* c : chosen) {
    const auto it = before.find(c->identity_digest);
    const StoredChoice* target = it == before.end() ? nullptr : &it->second;
    SyncedEntry e{c->identity_digest,
                  c->op,
                  c->key,
                  c->scope,
                  sync_action_for(*c, target, options.force),
                  c->created_at,
                  0,
                  !c->stale.empty()};
    if (target) e.target_created_at = target->created_at;
    if (!options.dry_run && action_writes(e.action)) write_entry(*to, *c, target);
    out.entries.push_back(std::move(e));
  }
  if (options.dry_run) return;
  // Read back: a store that could not write (lock, server gone) has warned and kept nothing.
  const std::map<std::string, StoredChoice> after = entries_by_digest(to->list(options.op));
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (!action_writes(out.entries[i].action)) continue;
    const auto it = after.find(chosen[i]->identity_digest);
    if (it == after.end() || !same_stored_entry(*chosen[i], it->second))
      out.entries[i].action = SyncAction::failed;
  }
}

// ---------------------------------------------------------------------------------------------
// Bans and pending misses

using BanName = std::pair<std::string, std::string>;  // identity digest, candidate

std::set<BanName> ban_names_of(Store& store) {
  std::set<BanName> out;
  for (const BannedCandidate& b : store.bans()) out.emplace(b.identity_digest, b.candidate);
  return out;
}

void sync_bans(Store* to, const std::vector<BannedCandidate>& bans, const StoreSyncOptions& options,
               StoreSyncSummary& out) {
  const std::set<BanName> before = to ? ban_names_of(*to) : std::set<BanName>();
  std::vector<const BannedCandidate*> written;
  for (const BannedCandidate& b : bans) {
    if (before.count({b.identity_digest, b.candidate})) {
      ++out.bans_present;
      continue;
    }
    if (!options.dry_run) to->ban(b);
    written.push_back(&b);
  }
  if (options.dry_run) {
    out.bans_copied = written.size();
    return;
  }
  const std::set<BanName> after = ban_names_of(*to);
  for (const BannedCandidate* b : written)
    ++(after.count({b->identity_digest, b->candidate}) ? out.bans_copied : out.bans_failed);
}

std::map<std::string, std::int64_t> pending_counts(Store& store, const std::string& op) {
  std::map<std::string, std::int64_t> out;
  for (const PendingMiss& m : store.pending(op)) out[m.identity_digest] = m.count;
  return out;
}

// Why the pending records stay in the source; empty: they move.
std::string why_pending_stay(const StoreSyncOptions& options) {
  if (!options.pending) return "not asked to move pending misses";
  if (!options.source_read_only.empty()) {
    return fmt::format(
        "the source is read-only ({}): a record that cannot be removed there would be counted "
        "again by the next copy",
        options.source_read_only);
  }
  return "";
}

void sync_pending(Store& from, Store* to, const std::vector<PendingMiss>& misses,
                  const StoreSyncOptions& options, StoreSyncSummary& out) {
  if (misses.empty()) return;
  out.pending_left_why = why_pending_stay(options);
  if (!out.pending_left_why.empty()) {
    out.pending_left = misses.size();
    return;
  }
  const auto count_of = [](const PendingMiss& m) { return std::max<std::int64_t>(m.count, 1); };
  if (options.dry_run) {
    out.pending_moved = misses.size();
    for (const PendingMiss& m : misses) out.misses_moved += count_of(m);
    return;
  }
  std::map<std::string, std::int64_t> before = pending_counts(*to, options.op);
  for (const PendingMiss& m : misses) to->record_miss(m);
  const std::map<std::string, std::int64_t> after = pending_counts(*to, options.op);
  for (const PendingMiss& m : misses) {
    const auto it = after.find(m.identity_digest);
    // Others may add misses meanwhile: at least ours must be there.
    if (it == after.end() || it->second < before[m.identity_digest] + count_of(m)) {
      ++out.pending_failed;
      continue;
    }
    if (from.remove_pending(m.identity_digest) == 0) {
      ++out.pending_unremoved;
      continue;
    }
    ++out.pending_moved;
    out.misses_moved += count_of(m);
  }
}

// ---------------------------------------------------------------------------------------------
// same_store

bool same_store_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return ca == cb;
}

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return text;
}

// host, port, database and schema of a PostgreSQL spec, as libpq reads the URL.
std::string server_of(std::string_view spec) {
  const detail::PgLocation where = detail::pg_location(std::string(spec));
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(where.url.c_str(), &error);
  if (!options) {
    const std::string why = error ? error : "out of memory";
    PQfreemem(error);
    throw UsageError(fmt::format("the store {} is not a URL libpq reads: {}",
                                 shown_store_spec(spec), detail::scrub_secrets(why, spec)));
  }
  std::map<std::string, std::string> given;
  for (const PQconninfoOption* o = options; o->keyword; ++o)
    if (o->val) given[o->keyword] = o->val;
  PQconninfoFree(options);
  std::string host = lower_case(given["hostaddr"].empty() ? given["host"] : given["hostaddr"]);
  // One machine's server, however it is reached.
  if (host.empty() || host == "localhost" || host == "127.0.0.1" || host == "::1" ||
      host.front() == '/')
    host = "local";
  const std::string port = given["port"].empty() ? "5432" : given["port"];
  const std::string db = given["dbname"].empty() ? given["user"] : given["dbname"];
  return fmt::format("{}\n{}\n{}\n{}", host, port, db, where.schema);
}

// ---------------------------------------------------------------------------------------------
// The copy

// `to` null: a target that does not exist yet, and `options` a dry run.
StoreSyncSummary sync_into(Store& from, Store* to, const StoreSyncOptions& options) {
  StoreSyncSummary out;
  out.from = from.describe();
  out.to = to ? to->describe() : std::string();
  out.dry_run = options.dry_run;
  out.force = options.force;
  const std::vector<StoredChoice> entries = from.list(options.op);
  const SyncSelection chosen = select_for_sync(from, entries, options, out.from);
  sync_entries(to, chosen.entries, options, out);
  sync_bans(to, chosen.bans, options, out);
  sync_pending(from, to, chosen.pending, options, out);
  return out;
}

}  // namespace

std::string_view to_string(SyncAction action) {
  switch (action) {
    case SyncAction::copied:
      return "copied";
    case SyncAction::replaced:
      return "replaced";
    case SyncAction::unchanged:
      return "unchanged";
    case SyncAction::kept_newer:
      return "kept_newer";
    case SyncAction::kept_stale:
      return "kept_stale";
    case SyncAction::failed:
      return "failed";
  }
  return "failed";
}

std::size_t StoreSyncSummary::count(SyncAction action) const {
  return static_cast<std::size_t>(
      std::count_if(entries.begin(), entries.end(),
                    [action](const SyncedEntry& e) { return e.action == action; }));
}

bool StoreSyncSummary::complete() const {
  return count(SyncAction::failed) == 0 && bans_failed == 0 && pending_failed == 0 &&
         pending_unremoved == 0;
}

StoreSyncSummary sync_store(Store& from, Store& to, const StoreSyncOptions& options) {
  if (&from == &to || from.describe() == to.describe()) {
    throw UsageError(fmt::format(
        "cannot copy the store {} into itself: the source and the target must be two stores",
        from.describe()));
  }
  return sync_into(from, &to, options);
}

StoreSyncSummary plan_sync_into_new(Store& from, const StoreSyncOptions& options) {
  StoreSyncOptions dry = options;
  dry.dry_run = true;
  return sync_into(from, nullptr, dry);
}

bool same_store(std::string_view spec_a, std::string_view spec_b) {
  const detail::ParsedStoreSpec a = detail::parse_store_spec(spec_a);
  const detail::ParsedStoreSpec b = detail::parse_store_spec(spec_b);
  if (!a.kind || !b.kind || a.kind->url != b.kind->url) return false;
  if (a.kind->url) return server_of(spec_a) == server_of(spec_b);
  return a.kind->name == b.kind->name && same_store_file(a.location, b.location);
}

}  // namespace tunekit
