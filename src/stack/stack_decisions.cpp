#include "stack/stack_decisions.hpp"

#include <algorithm>
#include <mutex>

namespace tunekit::detail {
namespace {

bool before(const stack::Dependency& a, const stack::Dependency& b) {
  return a.key.high != b.key.high ? a.key.high < b.key.high : a.key.low < b.key.low;
}

}  // namespace

std::vector<stack::Dependency> sorted_dependencies(std::vector<stack::Dependency> deps) {
  std::sort(deps.begin(), deps.end(), before);
  return deps;
}

namespace {

// Whether `current` (in any order) is the sorted `recorded`; no copy for zero or one entries.
bool same_dependencies(const std::vector<stack::Dependency>& recorded,
                       const std::vector<stack::Dependency>& current) {
  if (recorded.size() != current.size()) return false;
  if (current.size() <= 1) return recorded == current;
  return recorded == sorted_dependencies(current);
}

}  // namespace

StackDecisions::Lookup StackDecisions::find(const Digest& key,
                                            const std::vector<stack::Dependency>& current,
                                            bool claim) {
  {
    std::shared_lock lock(mutex_);
    auto it = decisions_.find(key);
    if (it != decisions_.end() && same_dependencies(it->second.dependencies, current))
      return {Found::hit, it->second.index, it->second.chosen, 0};
  }
  std::unique_lock lock(mutex_);
  Lookup out;
  auto it = decisions_.find(key);
  if (it != decisions_.end()) {
    if (same_dependencies(it->second.dependencies, current))
      return {Found::hit, it->second.index, it->second.chosen, 0};
    decisions_.erase(it);
    note(key, "invalidated: it was measured under other lower-scope decisions");
    out.invalidated = 1 + cascade(key, "a decision it depended on was invalidated");
  }
  if (pending_.contains(key)) {
    out.found = Found::pending;
  } else if (claim) {
    pending_.insert(key);
    out.found = Found::claimed;
  }
  return out;
}

void StackDecisions::release(const Digest& key) {
  std::unique_lock lock(mutex_);
  pending_.erase(key);
}

std::size_t StackDecisions::publish(const Digest& key, StackDecision decision,
                                    stack::StackReport report) {
  std::unique_lock lock(mutex_);
  pending_.erase(key);
  // A live execution may ban the pick while it was being measured (the tune read the bans
  // when it began): such a decision is not kept, so the next request decides without it.
  auto banned = bans_.find(key);
  const bool keep = banned == bans_.end() || !banned->second.contains(decision.chosen);
  if (!keep)
    report.note = "not kept: " + decision.chosen + " was banned while it was measured (" +
                  banned->second.at(decision.chosen) + ")";
  if (keep) {
    decision.dependencies = sorted_dependencies(std::move(decision.dependencies));
    decisions_[key] = std::move(decision);
  }
  std::erase_if(reports_, [&](const stack::StackReport& r) { return r.cache_key == key; });
  reports_.push_back(std::move(report));
  while (reports_.size() > max_reports_) reports_.pop_front();
  return cascade(key, "an operator decision it was measured under was re-decided");
}

std::size_t StackDecisions::invalidate(const Digest& key, const std::string& why) {
  std::unique_lock lock(mutex_);
  if (decisions_.erase(key) == 0) return 0;
  note(key, "invalidated: " + why);
  return 1 + cascade(key, "a decision it depended on was invalidated");
}

std::size_t StackDecisions::ban(const Digest& key, const std::string& name,
                                const std::string& why) {
  std::unique_lock lock(mutex_);
  bans_[key][name] = why;
  auto it = decisions_.find(key);
  if (it == decisions_.end() || it->second.chosen != name) return 0;
  decisions_.erase(it);
  note(key, "invalidated: " + name + " failed a live execution (" + why + ")");
  return 1 + cascade(key, "a decision it depended on was invalidated by a ban");
}

// Drops every decision recorded under a dependency on `changed` whose state is no longer the
// recorded one, then the ones under those, and so on. Caller holds the lock.
std::size_t StackDecisions::cascade(const Digest& changed, const std::string& why) {
  std::size_t dropped = 0;
  std::vector<Digest> work{changed};
  while (!work.empty()) {
    const Digest k = work.back();
    work.pop_back();
    const std::optional<stack::Dependency> now = current_of(k);
    std::vector<Digest> stale;
    for (const auto& [dk, d] : decisions_)
      for (const stack::Dependency& dep : d.dependencies)
        if (dep.key == k &&
            (!now || dep.chosen != now->chosen || dep.candidates != now->candidates))
          stale.push_back(dk);
    for (const Digest& dk : stale) {
      if (decisions_.erase(dk) == 0) continue;
      note(dk, "invalidated: " + why + " (" + k.hex() + ")");
      ++dropped;
      work.push_back(dk);
    }
  }
  return dropped;
}

std::optional<stack::Dependency> StackDecisions::current_of(const Digest& key) const {
  auto it = decisions_.find(key);
  if (it == decisions_.end()) return std::nullopt;
  return stack::Dependency{it->second.scope, key, it->second.candidates, it->second.chosen};
}

void StackDecisions::note(const Digest& key, const std::string& text) {
  for (stack::StackReport& r : reports_)
    if (r.cache_key == key) r.note = text;
}

std::vector<std::string> StackDecisions::bans(const Digest& key) const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> out;
  if (auto it = bans_.find(key); it != bans_.end())
    for (const auto& [name, why] : it->second) out.push_back(name);
  return out;
}

std::map<std::string, std::string> StackDecisions::ban_reasons(const Digest& key) const {
  std::shared_lock lock(mutex_);
  auto it = bans_.find(key);
  return it == bans_.end() ? std::map<std::string, std::string>{} : it->second;
}

std::optional<StackDecision> StackDecisions::decision(const Digest& key) const {
  std::shared_lock lock(mutex_);
  auto it = decisions_.find(key);
  if (it == decisions_.end()) return std::nullopt;
  return it->second;
}

std::optional<stack::StackReport> StackDecisions::report(const Digest& key) const {
  std::shared_lock lock(mutex_);
  for (const stack::StackReport& r : reports_)
    if (r.cache_key == key) return r;
  return std::nullopt;
}

std::vector<stack::StackReport> StackDecisions::reports() const {
  std::shared_lock lock(mutex_);
  return {reports_.begin(), reports_.end()};
}

}  // namespace tunekit::detail
