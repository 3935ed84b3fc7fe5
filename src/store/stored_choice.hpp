// Building a StoredChoice from a search: identity fields in clear, evidence as JSON.
#pragma once

#include <string>

#include "tunekit/identity.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

std::string device_json(const DeviceIdentity& device);
std::string toolchain_json(const Toolchain& toolchain);
std::string environment_json(const EnvironmentTags& tags);

// The entry for a measured search. `winner_config` is the winner's Config text.
StoredChoice make_stored_choice(const Identity& identity, const TuneReport& report,
                                const std::string& winner_config, bool budget_cut);

}  // namespace tunekit::detail
