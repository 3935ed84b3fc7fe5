// Building a StoredChoice from a search report (the public make_stored_choice in
// tunekit/store.hpp builds it from its parts), and the identity columns as the store keeps
// them (JSON objects; tune_pending compares a pending record's device with this machine's).
#pragma once

#include <string>

#include "tunekit/identity.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

std::string device_json(const DeviceIdentity& device);
std::string toolchain_json(const Toolchain& toolchain);
std::string environment_json(const EnvironmentTags& tags);

// The entry for a measured search: the report's winner, every candidate's reading as the
// evidence. `winner_config` is the winner's Config text.
StoredChoice make_stored_choice(const Identity& identity, const TuneReport& report,
                                const std::string& winner_config, bool budget_cut);

}  // namespace tunekit::detail
