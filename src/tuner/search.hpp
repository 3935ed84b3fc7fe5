// Exhaustive search over an op's plan groups: validate, then time, every admitted candidate.
#pragma once

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::detail {

// Runs the search and returns the report with the winner set (the default when nothing
// validated and measured cleanly). Classified failures are in the report; UsageError and
// FatalError propagate.
TuneReport exhaustive_search(Device& device, const OpBase& op, const Key& key,
                             const TunerOptions& options);

}  // namespace tunekit::detail
