// Stack decisions in the store kernel choices live in (DESIGN §10): one StoredChoice per
// decision, its Identity carrying the scope. Called with no lock held. Private to src/stack.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tunekit/stack.hpp"

namespace tunekit::detail {

class StackPersistence {
 public:
  // Persists only with a store and a known device (else every call does nothing).
  explicit StackPersistence(const stack::StackOptions& options);
  bool enabled() const { return enabled_; }

  // The stored selection for this decision (an index into set), when one serves: not stale,
  // of this scope, naming a candidate of the set.
  std::optional<std::size_t> find(const stack::Problem& problem, const stack::CandidateSet& set);
  // The candidates banned for this decision in the store.
  std::vector<BannedCandidate> bans(const stack::Problem& problem, const stack::CandidateSet& set);
  void put(const stack::Problem& problem, const stack::CandidateSet& set,
           const stack::StackReport& report);
  void ban(const stack::Problem& problem, const stack::CandidateSet& set,
           const std::string& candidate, const std::string& why);
  void mark_stale(const stack::Problem& problem, const stack::CandidateSet& set,
                  const std::string& why);

 private:
  std::shared_ptr<Store> store_;
  Identity base_;
  bool enabled_ = false;
};

// The report's entries as the store's evidence (status, paired ratio as the score, the
// reference as the default, the selection as the winner).
std::vector<CandidateReport> stack_evidence(const stack::StackReport& report);

}  // namespace tunekit::detail
