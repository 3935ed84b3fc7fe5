#include "commands/duration.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "tunekit/errors.hpp"

namespace tunekit::cli {

double parse_duration(std::string_view text, std::string_view flag) {
  auto bad = [&](std::string_view why) {
    return UsageError(
        fmt::format("{} '{}': {}; write e.g. 90s, 2m, 1.5h or 250ms", flag, text, why));
  };
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) throw bad("not a duration");
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "m" || unit == "min") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else {
    throw bad("unknown unit (use ms, s, m or h)");
  }
  const double seconds = value * scale;
  if (!std::isfinite(seconds) || seconds <= 0) throw bad("must be a positive, finite duration");
  if (seconds > 365.0 * 24 * 3600) throw bad("more than a year");
  return seconds;
}

}  // namespace tunekit::cli
