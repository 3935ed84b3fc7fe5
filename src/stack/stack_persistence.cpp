#include "stack/stack_persistence.hpp"

#include <chrono>

#include "stack/stack_decisions.hpp"

namespace tunekit::stack {

Identity stack_identity(const Identity& base, const Problem& problem, const CandidateSet& set) {
  Identity id;
  id.device = base.device;
  id.toolchain = base.toolchain;
  id.environment = base.environment;
  id.scope = std::string(to_string(problem.scope));
  id.op = problem.name;
  id.key = problem.signature;
  std::vector<Field> fields{
      {"candidates", set.checksum().hex()},
      {"abs", problem.tolerance.abs},
      {"rel", problem.tolerance.rel},
      {"readback", static_cast<std::int64_t>(problem.tolerance.max_readback_elements)}};
  std::size_t i = 0;
  for (const Dependency& d : detail::sorted_dependencies(problem.depends_on))
    fields.push_back(
        {"dependency" + std::to_string(i++), Key{{"scope", std::string(to_string(d.scope))},
                                                 {"key", d.key.hex()},
                                                 {"candidates", d.candidates.hex()},
                                                 {"chosen", d.chosen}}
                                                 .encode()});
  id.candidates = Digest::of(Key(std::move(fields)).encode());
  return id;
}

}  // namespace tunekit::stack

namespace tunekit::detail {
namespace {

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status status_of(const stack::ReportEntry& e) {
  if (e.status == stack::EntryStatus::rejected) return Status::rejected;
  if (e.status == stack::EntryStatus::banned) return Status::skipped;
  if (!e.failure) return Status::ok;
  switch (e.failure->kind) {
    case stack::FailureKind::validation_failed:
      return Status::validation_failed;
    case stack::FailureKind::out_of_memory:
      return Status::out_of_memory;
    case stack::FailureKind::run_failed:
      return Status::launch_failed;
    default:
      return Status::not_measured;  // no score, a failed reference, a reading that was none
  }
}

}  // namespace

std::vector<CandidateReport> stack_evidence(const stack::StackReport& report) {
  std::vector<CandidateReport> out;
  for (const stack::ReportEntry& e : report.entries) {
    CandidateReport c;
    c.index = out.size();
    c.name = e.candidate;
    c.config = "version=" + std::to_string(e.version);
    c.is_default = e.status == stack::EntryStatus::reference;
    c.winner = e.candidate == report.selected;
    c.outcome = {status_of(e), e.why};
    c.score = e.ratio;  // the paired ratio to the reference, not seconds
    c.vs_default = e.ratio > 0 ? 1 / e.ratio : 0;
    out.push_back(std::move(c));
  }
  return out;
}

StackPersistence::StackPersistence(const stack::StackOptions& options)
    : store_(options.store),
      base_(options.identity),
      enabled_(options.store && options.identity.device.known) {}

std::optional<std::size_t> StackPersistence::find(const stack::Problem& problem,
                                                  const stack::CandidateSet& set) {
  if (!enabled_) return std::nullopt;
  const Identity id = stack::stack_identity(base_, problem, set);
  std::optional<StoredChoice> found = store_->find(id.digest().hex());
  if (!found || !found->stale.empty() || found->scope != id.scope) return std::nullopt;
  for (std::size_t i = 0; i < set.candidates.size(); ++i)
    if (set.candidates[i].name == found->winner) return i;
  return std::nullopt;
}

std::vector<BannedCandidate> StackPersistence::bans(const stack::Problem& problem,
                                                    const stack::CandidateSet& set) {
  if (!enabled_) return {};
  return store_->bans(stack::stack_identity(base_, problem, set).digest().hex());
}

void StackPersistence::put(const stack::Problem& problem, const stack::CandidateSet& set,
                           const stack::StackReport& report) {
  if (!enabled_) return;
  const Identity id = stack::stack_identity(base_, problem, set);
  std::string config;
  for (const stack::StackCandidate& c : set.candidates)
    if (c.name == report.selected) config = "version=" + std::to_string(c.version);
  store_->put(make_stored_choice(id, report.selected, config, stack_evidence(report), false));
}

void StackPersistence::ban(const stack::Problem& problem, const stack::CandidateSet& set,
                           const std::string& candidate, const std::string& why) {
  if (!enabled_) return;
  const Identity id = stack::stack_identity(base_, problem, set);
  store_->ban(
      {id.digest().hex(), problem.name, problem.signature.text(), candidate, why, now_seconds()});
}

void StackPersistence::mark_stale(const stack::Problem& problem, const stack::CandidateSet& set,
                                  const std::string& why) {
  if (!enabled_) return;
  store_->mark_stale(stack::stack_identity(base_, problem, set).digest().hex(), why);
}

}  // namespace tunekit::detail
