// The console reporter's `cache push` / `cache pull` summary: a line per entry that moved or
// was kept, then what happened to entries, bans and pending misses. Every cell comes from a
// store: it is escaped for the terminal.
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/console_reporter.hpp"
#include "tunekit/store_sync.hpp"
#include "tunekit/terminal_text.hpp"

namespace tunekit::detail {
namespace {

constexpr std::size_t kSyncDigestDigits = 12;  // as `cache ls` shows it

std::string sync_action_text(const SyncedEntry& e, bool dry_run) {
  switch (e.action) {
    case SyncAction::copied:
      return dry_run ? "would copy" : "copied";
    case SyncAction::replaced:
      return fmt::format("{} (target's from {})", dry_run ? "would replace" : "replaced",
                         iso_time(e.target_created_at));
    case SyncAction::unchanged:
      return "unchanged";
    case SyncAction::kept_newer:
      return fmt::format("kept, newer in target ({}; --force replaces it)",
                         iso_time(e.target_created_at));
    case SyncAction::kept_stale:
      return "kept, stale in target (--force replaces it)";
    case SyncAction::failed:
      return "failed: the target did not keep it (see the warning above)";
  }
  return "";
}

void print_synced_entries(const StoreSyncSummary& s, std::ostream& out) {
  std::vector<std::vector<std::string>> rows{{"op", "key", "created", "action", "identity"}};
  const bool scoped = [&] {
    for (const SyncedEntry& e : s.entries)
      if (e.scope != "kernel") return true;
    return false;
  }();
  if (scoped) rows.front().insert(rows.front().begin() + 1, "scope");
  for (const SyncedEntry& e : s.entries) {
    if (e.action == SyncAction::unchanged) continue;  // counted below
    rows.push_back({e.op, e.key, iso_time(e.source_created_at) + (e.stale ? " (stale)" : ""),
                    sync_action_text(e, s.dry_run),
                    e.identity_digest.substr(0, kSyncDigestDigits)});
    if (scoped) rows.back().insert(rows.back().begin() + 1, e.scope);
  }
  if (rows.size() > 1) print_table(std::move(rows), "", out);
}

std::string pending_sync_text(const StoreSyncSummary& s) {
  std::string text = fmt::format("pending misses: {} {} ({} miss{})", s.pending_moved,
                                 s.dry_run ? "would move" : "moved", s.misses_moved,
                                 s.misses_moved == 1 ? "" : "es");
  if (s.pending_left)
    text += fmt::format(", {} left in the source: {}", s.pending_left, s.pending_left_why);
  if (s.pending_failed)
    text += fmt::format(", {} not kept by the target (left in the source)", s.pending_failed);
  if (s.pending_unremoved) {
    text += fmt::format(
        ", {} in the target but not removed from the source (remove them there with 'tunekit "
        "cache rm', or the next copy counts them again)",
        s.pending_unremoved);
  }
  return text;
}

}  // namespace

void ConsoleReporter::write(const StoreSyncSummary& s, std::ostream& out) {
  out << terminal_safe(fmt::format(
             "{} {} -> {}", s.dry_run ? "dry run (nothing written):" : "copied", s.from, s.to))
      << '\n';
  print_synced_entries(s, out);
  const std::string would = s.dry_run ? "would be " : "";
  out << fmt::format(
      "entries: {} {}copied, {} {}replaced, {} unchanged, {} kept (newer in target), {} kept "
      "(stale in target), {} failed\n",
      s.count(SyncAction::copied), would, s.count(SyncAction::replaced), would,
      s.count(SyncAction::unchanged), s.count(SyncAction::kept_newer),
      s.count(SyncAction::kept_stale), s.count(SyncAction::failed));
  out << fmt::format("bans: {} {}copied, {} already there{}\n", s.bans_copied, would,
                     s.bans_present,
                     s.bans_failed ? fmt::format(", {} failed", s.bans_failed) : "");
  out << terminal_safe(pending_sync_text(s)) << '\n';
}

}  // namespace tunekit::detail
