// Names of the stack controller's enums, and a failure's text.
#include "tunekit/stack_report.hpp"

#include <array>
#include <ostream>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tunekit/terminal_text.hpp"

namespace tunekit::stack {
namespace {

constexpr std::array<std::pair<Scope, std::string_view>, 3> kScopes{{
    {Scope::operator_, "operator"},
    {Scope::graph, "graph"},
    {Scope::application, "application"},
}};

}  // namespace

std::string_view to_string(Scope scope) {
  for (const auto& [s, name] : kScopes)
    if (s == scope) return name;
  return "unknown";
}

std::optional<Scope> scope_from_string(std::string_view name) {
  for (const auto& [s, n] : kScopes)
    if (n == name) return s;
  return std::nullopt;
}

std::string_view to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::ineligible:
      return "ineligible";
    case FailureKind::scratch_over_limit:
      return "scratch_over_limit";
    case FailureKind::run_failed:
      return "run_failed";
    case FailureKind::out_of_memory:
      return "out_of_memory";
    case FailureKind::not_measured:
      return "not_measured";
    case FailureKind::validation_failed:
      return "validation_failed";
    case FailureKind::no_score:
      return "no_score";
    case FailureKind::reference_failed:
      return "reference_failed";
    case FailureKind::banned:
      return "banned";
  }
  return "unknown";
}

std::string Failure::text() const {
  std::string out(to_string(kind));
  if (!message.empty()) out += ": " + message;
  return out;
}

std::string_view to_string(DecisionSource source) {
  switch (source) {
    case DecisionSource::hit:
      return "hit";
    case DecisionSource::stored:
      return "stored";
    case DecisionSource::tuned:
      return "tuned";
    case DecisionSource::no_score:
      return "no_score";
    case DecisionSource::only_reference:
      return "only_reference";
    case DecisionSource::contender:
      return "contender";
    case DecisionSource::nested:
      return "nested";
    case DecisionSource::disabled:
      return "disabled";
    case DecisionSource::cache_only_miss:
      return "cache_only_miss";
    case DecisionSource::banned:
      return "banned";
  }
  return "unknown";
}

std::string_view to_string(EntryStatus status) {
  switch (status) {
    case EntryStatus::reference:
      return "reference";
    case EntryStatus::selected:
      return "selected";
    case EntryStatus::scored:
      return "scored";
    case EntryStatus::no_score:
      return "no_score";
    case EntryStatus::rejected:
      return "rejected";
    case EntryStatus::failed:
      return "failed";
    case EntryStatus::banned:
      return "banned";
  }
  return "unknown";
}

void write_text(const StackReport& r, std::ostream& out) {
  out << terminal_safe(fmt::format("{} {}  {}  -> {} ({})", to_string(r.scope), r.problem,
                                   r.signature, r.selected, to_string(r.source)))
      << '\n';
  for (const ReportEntry& e : r.entries) {
    const std::string score = e.pairs > 0 ? fmt::format("ratio {:.3f} (MAD {:.1f} %, {} pairs)",
                                                        e.ratio, 100 * e.relative_mad, e.pairs)
                                          : std::string("-");
    out << terminal_safe(fmt::format("  {:<24} v{}  {:<9}  {}  {}", e.candidate, e.version,
                                     to_string(e.status), score, e.why))
        << '\n';
  }
  if (r.entries_cut > 0) out << fmt::format("  ({} more entries not kept)\n", r.entries_cut);
  for (const Dependency& d : r.dependencies)
    out << terminal_safe(fmt::format("  measured under {} {} -> {}", to_string(d.scope),
                                     d.key.hex().substr(0, 12),
                                     d.chosen.empty() ? "(undecided)" : d.chosen))
        << '\n';
  if (!r.note.empty()) out << "  " << terminal_safe(r.note) << '\n';
}

std::string report_json(const StackReport& r) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["scope"] = to_string(r.scope);
  j["problem"] = r.problem;
  j["signature"] = r.signature;
  j["workload_digest"] = r.workload_digest.hex();
  j["cache_key"] = r.cache_key.hex();
  j["selected"] = r.selected;
  j["source"] = to_string(r.source);
  Json entries = Json::array();
  for (const ReportEntry& e : r.entries) {
    Json x;
    x["candidate"] = e.candidate;
    x["version"] = e.version;
    x["status"] = to_string(e.status);
    if (e.failure)
      x["failure"] = {{"kind", to_string(e.failure->kind)}, {"message", e.failure->message}};
    x["ratio"] = e.ratio;
    x["relative_mad"] = e.relative_mad;
    x["ratio_high"] = e.ratio_high;
    x["pairs"] = e.pairs;
    x["why"] = e.why;
    entries.push_back(std::move(x));
  }
  j["entries"] = std::move(entries);
  j["entries_cut"] = r.entries_cut;
  Json deps = Json::array();
  for (const Dependency& d : r.dependencies)
    deps.push_back({{"scope", to_string(d.scope)},
                    {"key", d.key.hex()},
                    {"candidates", d.candidates.hex()},
                    {"chosen", d.chosen}});
  j["dependencies"] = std::move(deps);
  j["note"] = r.note;
  // Messages may carry any bytes: invalid UTF-8 becomes U+FFFD rather than an exception.
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace tunekit::stack
