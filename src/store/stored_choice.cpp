#include "store/stored_choice.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "report/json_reporter.hpp"

namespace tunekit {
namespace {

using Json = nlohmann::ordered_json;

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

namespace detail {

// The identity columns in the form the store keeps them (docs/formats.md).
std::string device_json(const DeviceIdentity& d) {
  Json j;
  j["backend"] = d.backend;
  j["vendor"] = d.vendor;
  j["product"] = d.product;
  j["architecture"] = d.architecture;
  j["features"] = d.features;
  j["compute_units"] = d.compute_units;
  j["memory_bytes"] = d.memory_bytes;
  j["l1d_bytes"] = d.l1d_bytes;
  j["l2_bytes"] = d.l2_bytes;
  j["l3_bytes"] = d.l3_bytes;
  j["driver"] = d.driver;
  return j.dump();
}

std::string toolchain_json(const Toolchain& t) {
  Json j;
  j["tunekit_version"] = t.tunekit_version;
  j["compiler"] = t.compiler;
  j["runtimes"] = t.runtimes;
  return j.dump();
}

std::string environment_json(const EnvironmentTags& tags) {
  Json j = Json::object();
  for (const auto& [name, value] : tags) j[name] = value;
  return j.dump();
}

}  // namespace detail

StoredChoice make_stored_choice(const Identity& identity, std::string winner,
                                std::string winner_config, std::string evidence, bool budget_cut) {
  StoredChoice c;
  c.identity_digest = identity.digest().hex();
  c.op = identity.op;
  c.key = identity.key.text();
  c.key_digest = identity.key.digest().hex();
  c.device = detail::device_json(identity.device);
  c.toolchain = detail::toolchain_json(identity.toolchain);
  c.environment = detail::environment_json(identity.environment);
  c.numerics_policy = std::string(to_string(identity.numerics_policy));
  c.candidates = identity.candidates.hex();
  c.winner = std::move(winner);
  c.winner_config = std::move(winner_config);
  c.evidence = std::move(evidence);
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
  return tunekit::make_stored_choice(identity, report.winner_name, winner_config,
                                     evidence_text(report), budget_cut);
}

}  // namespace detail
}  // namespace tunekit
