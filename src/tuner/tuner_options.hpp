// Bounds of TunerOptions and TimingOptions, checked once at the library's edge (the Tuner
// constructor): a NaN, a negative or an absurd value is a UsageError that names the field and
// what is allowed, never a hang (repeats_floor = 4294967295) or a silent misreading.
#pragma once

#include <string_view>

#include "tunekit/timing.hpp"
#include "tunekit/tuner_options.hpp"

namespace tunekit::detail {

// `where` prefixes each field in messages ("TunerOptions: measure.timing.").
void check_timing_options(const TimingOptions& options, std::string_view where);
// Every numeric field of the options (the timing ones included); the strategy and schedule
// strings are checked by check_search_options.
void check_tuner_options(const TunerOptions& options);

}  // namespace tunekit::detail
