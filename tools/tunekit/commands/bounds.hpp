// Bounded numbers on the command line: the one set of checks every numeric flag uses (durations
// have their own parser, duration.hpp). CLI11's own Range lets NaN through, and its integer
// conversion wraps "-1" into 18446744073709551615 and reads "010" as octal; these validators
// parse strictly in decimal, refuse what is outside [min, max] (NaN and infinities included)
// saying what is allowed and what was given, and hand CLI11 the canonical text. Attach the
// integer ones with ->transform(): ->check() would hand CLI11 the original text ("010").
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

namespace tunekit::cli {

// A whole number in [min, max]: "--threads: must be an integer in [0, 4096], got 1e9".
CLI::Validator integer_in(std::int64_t min, std::int64_t max);
// For unsigned targets (a sign is refused rather than wrapped).
CLI::Validator unsigned_in(std::uint64_t min, std::uint64_t max);
// A finite number in [min, max].
CLI::Validator real_in(double min, double max);

}  // namespace tunekit::cli
