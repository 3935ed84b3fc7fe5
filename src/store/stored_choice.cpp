#include "store/stored_choice.hpp"

#include <chrono>
#include <utility>

namespace tunekit {
namespace {

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SearchRecord search_record(const TuneReport& r) {
  SearchRecord s;
  s.strategy = r.strategy;
  s.schedule = r.schedule;
  s.seed = r.seed;
  s.space_size = r.space_size;
  s.distinct_points = r.distinct_points;
  s.evaluated = r.candidates.size();
  s.stop_reason = r.stop_reason;
  s.budget = r.budget;
  s.bucket = r.bucket;
  s.confidence = r.confidence;
  s.final_race = r.final_race;
  s.cpu_placement = r.cpu_placement;
  return s;
}

StoredChoice make_stored_choice(const Identity& identity, std::string winner,
                                std::string winner_config, std::vector<CandidateReport> evidence,
                                bool budget_cut, std::optional<SearchRecord> search) {
  StoredChoice c;
  c.identity_digest = identity.digest().hex();
  c.op = identity.op;
  c.key = identity.key.text();
  c.key_digest = identity.key.digest().hex();
  c.device = identity.device;
  c.toolchain = identity.toolchain;
  c.environment = identity.environment;
  c.numerics_policy = std::string(to_string(identity.numerics_policy));
  c.candidates = identity.candidates.hex();
  c.scope = identity.scope;
  c.winner = std::move(winner);
  c.winner_config = std::move(winner_config);
  c.evidence = std::move(evidence);
  c.search = std::move(search);
  c.measured = true;
  c.budget_cut = budget_cut;
  c.created_at = unix_now();
  c.tunekit_version = identity.toolchain.tunekit_version;
  return c;
}

PendingMiss make_pending_miss(const Identity& identity) {
  PendingMiss m;
  m.identity_digest = identity.digest().hex();
  m.op = identity.op;
  m.key = identity.key.text();
  m.candidates = identity.candidates.hex();
  m.device = detail::device_json(identity.device);
  m.environment = detail::environment_json(identity.environment);
  m.numerics_policy = std::string(to_string(identity.numerics_policy));
  m.count = 1;
  m.first_seen = m.last_seen = unix_now();
  return m;
}

namespace detail {

StoredChoice make_stored_choice(const Identity& identity, const TuneReport& report,
                                const std::string& winner_config, bool budget_cut) {
  return tunekit::make_stored_choice(identity, report.winner_name, winner_config, report.candidates,
                                     budget_cut, search_record(report));
}

}  // namespace detail
}  // namespace tunekit
