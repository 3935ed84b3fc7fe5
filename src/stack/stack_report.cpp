// Names of the stack controller's enums, and a failure's text.
#include "tunekit/stack_report.hpp"

#include <array>
#include <utility>

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
    case FailureKind::execution_failed:
      return "execution_failed";
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

}  // namespace tunekit::stack
