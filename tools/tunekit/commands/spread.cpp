#include "commands/spread.hpp"

#include <fmt/format.h>

namespace tunekit::cli {
namespace {

std::string seconds_text(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} µs", s * 1e6);
}

}  // namespace

std::optional<std::string> spread_line(const TuneReport& report) {
  const CandidateReport* best = nullptr;
  const CandidateReport* worst = nullptr;
  std::size_t measured = 0;
  for (const CandidateReport& c : report.candidates) {
    const bool has_reading = c.outcome.status == Status::ok || c.outcome.status == Status::hopeless;
    if (!has_reading || !c.timing || !(c.timing->median > 0)) continue;
    ++measured;
    if (!best || c.timing->median < best->timing->median) best = &c;
    if (!worst || c.timing->median > worst->timing->median) worst = &c;
  }
  if (measured < 2) return std::nullopt;
  return fmt::format(
      "spread     best {} ({}) … worst {} ({}): {:.2f}× over {} measured configurations",
      seconds_text(best->timing->median), best->name, seconds_text(worst->timing->median),
      worst->name, worst->timing->median / best->timing->median, measured);
}

}  // namespace tunekit::cli
