// Durations on the command line: "90s", "2m", "1.5h", "250ms" or plain seconds.
#pragma once

#include <string_view>

namespace tunekit::cli {

// Seconds; NaN, infinities, negative, empty, an unknown unit or more than a year is a
// UsageError naming `flag`.
double parse_duration(std::string_view text, std::string_view flag);

}  // namespace tunekit::cli
