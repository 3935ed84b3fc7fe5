// The controller's state: decisions per cache key, the keys being tuned, bans, kept reports.
// Every method takes the state lock for its own few steps and never calls out while holding
// it (no candidate, validation or I/O runs under it). Private to src/stack.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunekit/stack.hpp"

namespace tunekit::detail {

struct DigestHash {
  std::size_t operator()(const Digest& d) const { return d.low ^ (d.high * 0x9e3779b97f4a7c15ull); }
};

struct StackDecision {
  stack::Scope scope = stack::Scope::operator_;
  std::size_t index = 0;
  std::string chosen;
  Digest candidates;  // the candidate-set checksum it was made over
  stack::DecisionSource source = stack::DecisionSource::tuned;
  std::vector<stack::Dependency> dependencies;  // sorted by key
};

class StackDecisions {
 public:
  explicit StackDecisions(std::size_t max_reports) : max_reports_(max_reports) {}

  enum class Found { hit, pending, claimed, miss };
  struct Lookup {
    Found found = Found::miss;
    std::size_t index = 0;  // hit: the decision's candidate
    std::string chosen;
    std::size_t invalidated = 0;  // decisions dropped because their dependencies changed
  };
  // A decision measured under other dependencies than `current` is dropped (with what depends
  // on it) and the lookup goes on as a miss. A miss while `claim` marks the key as being
  // tuned (claimed); a key already marked is `pending`.
  Lookup find(const Digest& key, const std::vector<stack::Dependency>& current, bool claim);
  // Unmarks a claimed key (a tune that threw).
  void release(const Digest& key);
  // Publishes a tune's decision and report, unmarks the key; returns how many decisions were
  // invalidated because this one changed (dependents). A decision whose pick was banned for
  // the key meanwhile is not kept (the report says so).
  std::size_t publish(const Digest& key, StackDecision decision, stack::StackReport report);
  // Drops the decision and its dependents; returns how many were dropped.
  std::size_t invalidate(const Digest& key, const std::string& why);
  // Bans `name` for `key`; drops the decision when it chose `name`. Returns the drops.
  std::size_t ban(const Digest& key, const std::string& name, const std::string& why);

  std::vector<std::string> bans(const Digest& key) const;
  std::map<std::string, std::string> ban_reasons(const Digest& key) const;  // name -> why
  std::optional<StackDecision> decision(const Digest& key) const;
  std::optional<stack::StackReport> report(const Digest& key) const;
  std::vector<stack::StackReport> reports() const;

 private:
  std::size_t cascade(const Digest& changed, const std::string& why);
  std::optional<stack::Dependency> current_of(const Digest& key) const;
  void note(const Digest& key, const std::string& text);

  mutable std::shared_mutex mutex_;
  std::unordered_map<Digest, StackDecision, DigestHash> decisions_;
  std::unordered_set<Digest, DigestHash> pending_;
  std::unordered_map<Digest, std::map<std::string, std::string>, DigestHash> bans_;
  std::deque<stack::StackReport> reports_;  // oldest first, one per key
  std::size_t max_reports_;
};

// Sorted by key, so two dependency lists compare equal whatever order they were declared in.
std::vector<stack::Dependency> sorted_dependencies(std::vector<stack::Dependency> deps);

}  // namespace tunekit::detail
