#include "tuner/answer_log.hpp"

#include <fmt/format.h>

#include "report/console_reporter.hpp"

namespace tunekit::detail {
namespace {

std::string searched_line(const TuneReport& r) {
  // Points that compute the same thing for this key were not proposed (Op::effective_config).
  const std::string distinct = r.distinct_points > 0 && r.distinct_points < r.space_size
                                   ? fmt::format(", {} distinct for this key", r.distinct_points)
                                   : "";
  std::string line = fmt::format(
      "{} {}: searched {} of {} candidates{} ({}, seed {}) in {:.3g} s: {} wins, {:.3g}x the "
      "default {}",
      r.op, r.key, r.candidates.size(), r.space_size, distinct, r.strategy, r.seed, r.seconds_total,
      r.winner_name, r.speedup, r.default_name);
  if (r.budget.cut) line += fmt::format("; budget cut: {}", r.budget.stopped);
  if (!r.reason.empty()) line += fmt::format(" ({})", r.reason);
  return line;
}

std::string candidate_line(const TuneReport& r, const CandidateReport& c) {
  // A space's points are named by their config: shown once.
  std::string line = fmt::format("{} {}: candidate {}", r.op, r.key, c.name);
  if (!c.config.empty() && c.config != c.name) line += fmt::format(" [{}]", c.config);
  line += fmt::format(": {}", to_string(c.outcome.status));
  if (c.outcome.ok())
    line += fmt::format(", {:.4g} s, {:.3g}x the default", c.score, c.vs_default);
  else if (!c.outcome.message.empty())
    line += ": " + c.outcome.message;
  return line;
}

}  // namespace

void log_answer(const Log& log, const TuneReport& r) {
  if (r.source == Source::memory_hit) {
    log.lazy(LogLevel::debug,
             [&] { return fmt::format("{} {}: {} from memory", r.op, r.key, r.winner_name); });
    return;
  }
  if (r.cpu_placement.mixed())
    log.warn(fmt::format(
        "{} {}: the host moved this machine's CPUs during the search ({}): multi-threaded "
        "readings compare two placements; tune again to decide within one",
        r.op, r.key, placement_readings(r.cpu_placement)));
  if (!log.enabled(LogLevel::info)) return;
  if (r.source == Source::searched) {
    log.info(searched_line(r));
    if (log.enabled(LogLevel::debug))
      for (const CandidateReport& c : r.candidates) log.debug(candidate_line(r, c));
    return;
  }
  std::string line = fmt::format("{} {}: {} ({})", r.op, r.key, r.winner_name, to_string(r.source));
  if (!r.reason.empty()) line += ": " + r.reason;
  log.info(line);
}

}  // namespace tunekit::detail
