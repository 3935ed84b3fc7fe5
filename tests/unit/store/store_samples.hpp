// The entries the store tests write (a stored choice, a ban, a pending miss), the same for
// every store.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/store.hpp"

namespace tunekit::testing {

// The warnings a store gave, for the tests to read.
struct Warnings {
  std::vector<std::string> seen;
  WarningSink sink() {
    return [this](std::string_view m) { seen.emplace_back(m); };
  }
  std::string all() const {
    std::string out;
    for (const std::string& w : seen) out += w + "\n";
    return out;
  }
};

inline StoredChoice sample(std::string digest, std::string op = "sgemm") {
  StoredChoice c;
  c.identity_digest = std::move(digest);
  c.op = std::move(op);
  c.key = "m=1,n=2";
  c.key_digest = "kd";
  c.device.product = "x";
  c.numerics_policy = "reassociates";
  c.candidates = "cs";
  c.winner = "fast";
  c.winner_config = "mc=64";
  c.budget_cut = true;
  c.created_at = 1700000000;
  c.tunekit_version = "0.1.0";
  return c;
}

inline BannedCandidate ban_of(std::string digest, std::string candidate, std::string reason) {
  return {std::move(digest), "sgemm", "m=1,n=2", std::move(candidate), std::move(reason), 0};
}

inline PendingMiss miss_of(std::string digest, std::string op, std::int64_t seen) {
  PendingMiss m;
  m.identity_digest = std::move(digest);
  m.op = std::move(op);
  m.key = "n=" + std::to_string(seen);
  m.candidates = "cs";
  m.device = R"({"product":"x"})";
  m.environment = R"({"power":"ac"})";
  m.numerics_policy = "reassociates";
  m.first_seen = m.last_seen = seen;
  return m;
}

}  // namespace tunekit::testing
