// The JSON reporter's stored choices: `cache ls --json` (an array of entries), `cache show
// --json` (the same, each with its bans), `cache ls --pending --json` and `tune --pending --json`.
// The identity parts and the evidence are written by store/evidence_codec.hpp, in the shape the
// store keeps them.
#include <ostream>

#include "report/console_reporter.hpp"
#include "report/json_reporter.hpp"
#include "store/evidence_codec.hpp"
#include "tunekit/pending.hpp"

namespace tunekit::detail {
namespace {

using Json = nlohmann::ordered_json;

Json choice_json(const StoredChoice& c) {
  Json j;
  j["identity_digest"] = c.identity_digest;
  j["op"] = c.op;
  j["scope"] = c.scope;  // "kernel", or a stack decision's scope
  j["key"] = c.key;
  j["key_digest"] = c.key_digest;
  j["bucket"] = c.search ? c.search->bucket : std::string();  // empty: an exact key
  j["device"] = device_object(c.device);
  j["toolchain"] = toolchain_object(c.toolchain);
  j["environment"] = environment_object(c.environment);
  j["numerics_policy"] = c.numerics_policy;
  j["candidates"] = c.candidates;
  j["winner"] = c.winner;
  j["winner_config"] = c.winner_config;
  j["evidence"] = evidence_json(c.evidence, c.search);
  j["measured"] = c.measured;
  j["budget_cut"] = c.budget_cut;
  j["created_at"] = c.created_at;
  j["created"] = iso_time(c.created_at);
  j["tunekit_version"] = c.tunekit_version;
  j["stale"] = c.stale;  // empty: it serves
  return j;
}

Json ban_json(const BannedCandidate& b) {
  Json j;
  j["candidate"] = b.candidate;
  j["reason"] = b.reason;
  j["banned_at"] = b.banned_at;
  j["banned"] = iso_time(b.banned_at);
  return j;
}

// A JSON column kept as text, embedded as JSON (kept as a string when it does not parse, so a
// damaged record is still shown).
Json embedded(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Json(text);
  return j;
}

Json pending_json(const PendingMiss& m) {
  Json j;
  j["identity_digest"] = m.identity_digest;
  j["op"] = m.op;
  j["key"] = m.key;
  j["candidates"] = m.candidates;
  j["device"] = embedded(m.device);
  j["environment"] = embedded(m.environment);
  j["numerics_policy"] = m.numerics_policy;
  j["count"] = m.count;
  j["first_seen_at"] = m.first_seen;
  j["first_seen"] = iso_time(m.first_seen);
  j["last_seen_at"] = m.last_seen;
  j["last_seen"] = iso_time(m.last_seen);
  return j;
}

Json outcome_json(const PendingOutcome& o) {
  Json j;
  j["op"] = o.miss.op;
  j["key"] = o.miss.key;
  j["identity_digest"] = o.miss.identity_digest;
  j["count"] = o.miss.count;
  j["status"] = std::string(to_string(o.status));
  j["why"] = o.why;
  if (o.status == PendingStatus::tuned || o.status == PendingStatus::not_stored)
    j["report"] = report_json(o.report);
  return j;
}

void dump(const Json& j, int indent, std::ostream& out) {
  // Messages may carry compiler logs in any encoding: invalid UTF-8 becomes U+FFFD.
  out << j.dump(indent, ' ', false, Json::error_handler_t::replace) << '\n';
}

}  // namespace

void JsonReporter::write(const StoredChoiceList& list, std::ostream& out) {
  Json all = Json::array();
  for (const StoredChoice& c : list.choices) all.push_back(choice_json(c));
  dump(all, indent_, out);
}

void JsonReporter::write(const std::vector<StoredChoiceDetail>& shown, std::ostream& out) {
  Json all = Json::array();
  for (const StoredChoiceDetail& d : shown) {
    Json j = choice_json(d.choice);
    j["bans"] = Json::array();
    for (const BannedCandidate& b : d.bans) j["bans"].push_back(ban_json(b));
    all.push_back(std::move(j));
  }
  dump(all, indent_, out);
}

void JsonReporter::write(const PendingMissList& list, std::ostream& out) {
  Json all = Json::array();
  for (const PendingMiss& m : list.misses) all.push_back(pending_json(m));
  dump(all, indent_, out);
}

void JsonReporter::write(const PendingOutcome&, std::ostream&) {
  // Nothing as it happens: the list of every outcome is one JSON document.
}

void JsonReporter::write(const std::vector<PendingOutcome>& outcomes, std::ostream& out) {
  Json all = Json::array();
  for (const PendingOutcome& o : outcomes) all.push_back(outcome_json(o));
  dump(all, indent_, out);
}

}  // namespace tunekit::detail
