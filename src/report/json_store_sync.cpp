// The JSON reporter's `cache push --json` / `cache pull --json`: the counts, then one object
// per selected entry with what became of it.
#include <ostream>

#include "report/console_reporter.hpp"
#include "report/json_reporter.hpp"
#include "tunekit/store_sync.hpp"

namespace tunekit::detail {
namespace {

using SyncJson = nlohmann::ordered_json;

SyncJson synced_entry_json(const SyncedEntry& e) {
  SyncJson j;
  j["identity_digest"] = e.identity_digest;
  j["op"] = e.op;
  j["scope"] = e.scope;
  j["key"] = e.key;
  j["action"] = to_string(e.action);
  j["created_at"] = e.source_created_at;
  j["target_created_at"] = e.target_created_at;  // 0: the target had none
  j["stale"] = e.stale;
  return j;
}

}  // namespace

void JsonReporter::write(const StoreSyncSummary& s, std::ostream& out) {
  SyncJson j;
  j["from"] = s.from;
  j["to"] = s.to;
  j["dry_run"] = s.dry_run;
  j["force"] = s.force;
  j["complete"] = s.complete();
  SyncJson counts = SyncJson::object();
  for (SyncAction a : {SyncAction::copied, SyncAction::replaced, SyncAction::unchanged,
                       SyncAction::kept_newer, SyncAction::kept_stale, SyncAction::failed})
    counts[std::string(to_string(a))] = s.count(a);
  j["counts"] = counts;
  j["bans"] = {{"copied", s.bans_copied}, {"present", s.bans_present}, {"failed", s.bans_failed}};
  j["pending"] = {{"moved", s.pending_moved},   {"misses", s.misses_moved},
                  {"left", s.pending_left},     {"left_why", s.pending_left_why},
                  {"failed", s.pending_failed}, {"unremoved", s.pending_unremoved}};
  SyncJson entries = SyncJson::array();
  for (const SyncedEntry& e : s.entries) entries.push_back(synced_entry_json(e));
  j["entries"] = entries;
  // Store text is anyone's: invalid UTF-8 is replaced, never a throw.
  out << j.dump(indent_, ' ', false, SyncJson::error_handler_t::replace) << '\n';
}

}  // namespace tunekit::detail
