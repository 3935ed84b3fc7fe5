// Building a StoredChoice from a search report (the public make_stored_choice in
// tunekit/store.hpp builds it from its parts). The identity columns' JSON (tune_pending
// compares a pending record's device with this machine's) is in evidence_codec.hpp.
#pragma once

#include <string>

#include "store/evidence_codec.hpp"
#include "tunekit/identity.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

// The entry for a measured search: the report's winner, every candidate's reading as the
// evidence. `winner_config` is the winner's Config text.
StoredChoice make_stored_choice(const Identity& identity, const TuneReport& report,
                                const std::string& winner_config, bool budget_cut);

}  // namespace tunekit::detail
