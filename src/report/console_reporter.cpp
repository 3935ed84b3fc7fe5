#include "report/console_reporter.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tunekit/outcome.hpp"

namespace tunekit::detail {
namespace {

// A few readings wait for a CPU anywhere; past this share another process held the cores
// while the decision was made (DecisionConfidence::waited_share).
constexpr double kBusyWaitedShare = 0.05;

bool is_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U;
}

enum class Align { left, right };

struct Column {
  std::string title;
  Align align = Align::left;
};

std::string pad(std::string_view text, std::size_t width, Align align) {
  const std::size_t used = display_width(text);
  const std::string fill(width > used ? width - used : 0, ' ');
  return align == Align::left ? std::string(text) + fill : fill + std::string(text);
}

// Renders rows under titled columns, two spaces apart, no trailing blanks.
std::string render_table(const std::vector<Column>& columns,
                         const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(columns.size(), 0);
  for (std::size_t i = 0; i < columns.size(); ++i) widths[i] = display_width(columns[i].title);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));

  std::string text;
  auto emit = [&](auto cell_of) {
    std::string line;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i > 0) line += "  ";
      line += pad(cell_of(i), widths[i], columns[i].align);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    text += line;
    text += '\n';
  };
  emit([&](std::size_t i) -> std::string_view { return columns[i].title; });
  for (const auto& row : rows)
    emit([&](std::size_t i) -> std::string_view {
      return i < row.size() ? std::string_view(row[i]) : std::string_view();
    });
  return text;
}

std::string ratio(double x) {
  return fmt::format("{:.2f}×", x);
}

std::string short_hex(const std::string& hex) {
  return hex.size() > 12 ? hex.substr(0, 12) + "…" : hex;
}

std::string winner_line(const TuneReport& r) {
  std::string text = r.winner_name.empty() ? fmt::format("#{}", r.winner) : r.winner_name;
  if (r.winner_score > 0) text += fmt::format("  {}", format_seconds(r.winner_score));
  if (r.winner == r.default_index) {
    text += "  (the default)";
  } else if (r.winner_score > 0 && r.default_score > 0) {
    text += fmt::format("  {} vs default {} ({})", ratio(r.speedup), r.default_name,
                        format_seconds(r.default_score));
  } else if (r.source == Source::searched) {
    text += fmt::format("  (default {} not measured)", r.default_name);
  } else if (!r.default_name.empty()) {
    text += fmt::format("  (default: {})", r.default_name);
  }
  return text;
}

// "28: 25 ok, 2 rejected, 1 validation_failed"
std::string candidates_line(const std::vector<CandidateReport>& candidates) {
  std::map<Status, std::size_t> counts;
  for (const auto& c : candidates) ++counts[c.outcome.status];
  std::string text = fmt::format("{}:", candidates.size());
  const char* separator = " ";
  for (const auto& [status, count] : counts) {
    text += fmt::format("{}{} {}", separator, count, to_string(status));
    separator = ", ";
  }
  return text;
}

// `checks`: the search ran checked calls (on some candidates): an ok one without them says so.
std::string note_of(const CandidateReport& c, bool checks) {
  if (!c.outcome.ok()) return clip(c.outcome.message, ConsoleReporter::kMessageWidth);
  std::string note;
  if (c.retries > 0) note = fmt::format("retried {}×", c.retries);
  auto add = [&](const std::string& more) { note += (note.empty() ? "" : ", ") + more; };
  if (checks && !c.checked) add("not checked (behind)");
  // The median shown is the final race's; what the search's own window read beside it.
  if (c.finalist) add("final race (the search read " + format_seconds(c.search_score) + ")");
  if (c.timing && c.timing->contended) add("contended");
  // Readings the scheduler stretched: kept (counted), or refused and taken again.
  if (c.timing && c.timing->waited > 0) add(fmt::format("{} waited for a CPU", c.timing->waited));
  if (c.timing && c.timing->retaken > 0) add(fmt::format("{} retaken", c.timing->retaken));
  return note;
}

std::string candidate_table(const std::vector<CandidateReport>& candidates) {
  // Ranked rows first (fastest first), then the declined ones in declaration order.
  std::vector<const CandidateReport*> order;
  order.reserve(candidates.size());
  for (const auto& c : candidates) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    if (a->outcome.ok() != b->outcome.ok()) return a->outcome.ok();
    if (a->outcome.ok() && a->score != b->score) return a->score < b->score;
    return a->index < b->index;
  });

  const bool queued = std::any_of(candidates.begin(), candidates.end(),
                                  [](const auto& c) { return c.timing && c.timing->depth > 1; });
  const bool checks =
      std::any_of(candidates.begin(), candidates.end(), [](const auto& c) { return c.checked; });
  std::vector<Column> columns = {{"", Align::left},        {"candidate", Align::left},
                                 {"status", Align::left},  {"median", Align::right},
                                 {"min", Align::right},    {"MAD", Align::right},
                                 {"samples", Align::right}};
  if (queued) columns.push_back({"depth", Align::right});
  columns.push_back({"vs default", Align::right});
  columns.push_back({"note", Align::left});

  std::vector<std::vector<std::string>> rows;
  rows.reserve(order.size());
  for (const auto* c : order) {
    std::string mark = std::string(c->winner ? "*" : "") + (c->is_default ? "d" : "");
    std::vector<std::string> row = {mark, c->name, std::string(to_string(c->outcome.status))};
    if (c->timing) {
      const TimingResult& t = *c->timing;
      row.insert(row.end(), {format_seconds(t.median), format_seconds(t.min), format_seconds(t.mad),
                             std::to_string(t.samples.size())});
      if (queued) row.push_back(std::to_string(t.depth));
    } else {
      row.insert(row.end(), {"-", "-", "-", "-"});
      if (queued) row.emplace_back("-");
    }
    row.push_back(c->outcome.ok() && c->vs_default > 0 ? ratio(c->vs_default) : "-");
    row.push_back(note_of(*c, checks));
    rows.push_back(std::move(row));
  }
  return render_table(columns, rows);
}

}  // namespace

std::string confidence_text(const DecisionConfidence& d) {
  std::string text;
  if (d.runner_up.empty()) {
    text = d.verdict.empty() ? "no runner-up" : terminal_safe(d.verdict);
  } else {
    text = fmt::format("ahead of {} by {:.3g}x (95 % low {:.3g}x): {}", terminal_safe(d.runner_up),
                       d.advantage, d.advantage_low, terminal_safe(d.verdict));
  }
  if (!d.anchor.empty() && d.anchor_paired_ratio > 0) {
    text += fmt::format("; paired vs the library anchor {}: winner/anchor {:.3g}",
                        terminal_safe(d.anchor), d.anchor_paired_ratio);
    if (d.anchor_paired_high > 0) text += fmt::format(" (95 % <= {:.3g})", d.anchor_paired_high);
  } else if (!d.anchor.empty()) {
    text += fmt::format("; the library anchor {} kept in pairs", terminal_safe(d.anchor));
  }
  if (!d.tie_rival.empty() && d.tie_paired_ratio > 0)
    // Four digits: the tie pairing's bar is 1.01, its ratios within a percent or two of 1.
    text += fmt::format("; paired with the tied {}: winner/it {:.4g}", terminal_safe(d.tie_rival),
                        d.tie_paired_ratio);
  if (d.paired_high > 0)
    text += fmt::format("; paired vs the default: winner/default <= {:.3g} (95 %)", d.paired_high);
  if (d.waited_share >= kBusyWaitedShare)
    text += fmt::format(
        "; decided under load: {:.0f} % of the readings waited for a CPU (tune "
        "again with --mode force when the machine is quiet)",
        100 * d.waited_share);
  return text;
}

std::string distinct_text(std::size_t distinct_points, std::size_t space_size) {
  if (distinct_points == 0 || distinct_points >= space_size) return "";
  return fmt::format(" ({} distinct for this key)", distinct_points);
}

std::string final_race_text(const FinalRace& race, std::string_view winner) {
  if (race.finalists == 0) return terminal_safe(race.note);
  std::string text = fmt::format("{} finalists timed again side by side ({})", race.finalists,
                                 format_seconds(race.seconds));
  if (!race.search_pick.empty() && race.search_pick != winner)
    text += fmt::format("; the search's own readings picked {}", terminal_safe(race.search_pick));
  if (!race.note.empty()) text += "; " + terminal_safe(race.note);
  return text;
}

std::string placement_text(const CpuPlacement& p) {
  std::string text = placement_readings(p);
  if (p.mixed())
    text +=
        "; the host moved the CPUs during the search: multi-threaded readings compare two "
        "placements";
  return text;
}

std::string placement_readings(const CpuPlacement& p) {
  if (!p.measured()) return "";
  std::string text = fmt::format(
      "cross-CPU round trip {:.0f} ns before the search, {:.0f} ns after", p.before_ns, p.after_ns);
  if (p.lowest_ns > 0 && p.lowest_ns < std::min(p.before_ns, p.after_ns))
    text += fmt::format(", {:.0f} ns at the lowest", p.lowest_ns);
  if (p.waits > 0)
    text += fmt::format("; waited {} for the CPUs to be near again ({} time{})",
                        format_seconds(p.waited_seconds), p.waits, p.waits == 1 ? "" : "s");
  return text;
}

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  if (seconds == 0) return "0 s";
  struct Unit {
    double scale;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1e-9, "ns"}, {1e-6, "µs"}, {1e-3, "ms"}, {1.0, "s"}};
  for (const Unit& unit : kUnits) {
    const double v = seconds / unit.scale;
    if (v >= 999.5 && unit.scale < 1.0) continue;  // rounds to 1000: the next unit reads better
    if (v < 9.995) return fmt::format("{:.2f} {}", v, unit.name);
    if (v < 99.95) return fmt::format("{:.1f} {}", v, unit.name);
    return fmt::format("{:.0f} {}", v, unit.name);
  }
  return "-";  // unreachable: the last unit always formats
}

std::size_t display_width(std::string_view utf8) {
  return static_cast<std::size_t>(
      std::count_if(utf8.begin(), utf8.end(), [](char c) { return !is_continuation(c); }));
}

std::string clip(std::string_view text, std::size_t width) {
  text = text.substr(0, text.find_first_of("\r\n"));
  std::string spaced(text);
  std::replace(spaced.begin(), spaced.end(), '\t', ' ');
  const std::string line = terminal_safe(spaced);  // ESC and friends shown, never obeyed
  if (display_width(line) <= width) return line;
  if (width == 0) return {};
  // Keep width - 1 code points, then the ellipsis.
  std::size_t kept = 0;
  std::size_t end = 0;
  while (end < line.size()) {
    std::size_t next = end + 1;
    while (next < line.size() && is_continuation(line[next])) ++next;
    if (kept + 1 > width - 1) break;
    ++kept;
    end = next;
  }
  return line.substr(0, end) + "…";
}

namespace {

// The report with every string that may come from outside (KT files, stores, artifacts, a
// user's op) escaped for the terminal. Messages are left to clip(), which keeps their first
// line and escapes it.
TuneReport terminal_safe_copy(const TuneReport& report) {
  TuneReport r = report;
  for (std::string* s : {&r.op, &r.op_checksum, &r.key, &r.key_digest, &r.bucket, &r.device,
                         &r.reason, &r.stale, &r.winner_name, &r.default_name, &r.strategy,
                         &r.schedule, &r.stop_reason, &r.budget.stopped})
    *s = terminal_safe(*s);
  for (CandidateReport& c : r.candidates) {
    c.name = terminal_safe(c.name);
    c.config = terminal_safe(c.config);
  }
  return r;
}

}  // namespace

void ConsoleReporter::write(const TuneReport& report, std::ostream& out) {
  const TuneReport r = terminal_safe_copy(report);
  std::string text;
  auto field = [&text](std::string_view label, const std::string& value) {
    text += fmt::format("{:<11}{}\n", label, value);
  };
  field("op", r.op_checksum.empty()
                  ? r.op
                  : fmt::format("{}  (candidate set {})", r.op, short_hex(r.op_checksum)));
  field("key",
        r.key_digest.empty() ? r.key : fmt::format("{}  ({})", r.key, short_hex(r.key_digest)));
  if (!r.bucket.empty()) field("bucket", r.bucket);
  field("device", r.device.empty() ? "(unknown)" : r.device);
  field("source", r.reason.empty() ? std::string(to_string(r.source))
                                   : fmt::format("{} ({})", to_string(r.source), r.reason));
  if (!r.stale.empty()) field("stale", r.stale);
  field("winner", winner_line(r));
  if (r.confidence) field("confidence", confidence_text(*r.confidence));
  field("statistic", fmt::format("{}, tie band {:.1f} %, numerics up to {}", to_string(r.statistic),
                                 r.tie_band * 100.0, to_string(r.numerics_policy)));
  if (!r.strategy.empty()) {
    std::string line = fmt::format("{} / {}, seed {}: {} of {} candidates{}, {}", r.strategy,
                                   r.schedule, r.seed, r.candidates.size(), r.space_size,
                                   distinct_text(r.distinct_points, r.space_size),
                                   r.stop_reason.empty() ? "done" : r.stop_reason);
    if (r.budget.seconds > 0) line += fmt::format("; budget {}", format_seconds(r.budget.seconds));
    if (r.budget.evaluations > 0)
      line += fmt::format("; budget {} evaluations", r.budget.evaluations);
    if (r.budget.cut) line += " (partial: stored as budget_cut)";
    field("search", line);
    if (!r.budget.stopped.empty()) field("stopped", r.budget.stopped);
    if (const std::string race = final_race_text(report.final_race, report.winner_name);
        !race.empty())
      field("final race", race);
  }
  if (r.seconds_total > 0) {
    std::string settling;  // what the windows waited for the device to settle, where they did
    if (r.seconds_settling > 0)
      settling = fmt::format(" (of it {} settling)", format_seconds(r.seconds_settling));
    field("time", fmt::format("{} total: {} compiling, {} validating, {} measuring{}",
                              format_seconds(r.seconds_total), format_seconds(r.seconds_compiling),
                              format_seconds(r.seconds_validating),
                              format_seconds(r.seconds_measuring), settling));
  }
  if (const std::string placement = placement_text(r.cpu_placement); !placement.empty())
    field("CPUs", placement);
  if (!r.isolation.empty())
    field("trials", r.isolation.rfind("worker", 0) == 0
                        ? "in worker processes" + r.isolation.substr(6)  // "(spawned: PROGRAM)"
                        : r.isolation);
  if (r.candidates.empty()) {
    field("candidates", "none measured in this call");
  } else {
    field("candidates", candidates_line(r.candidates));
    text += '\n';
    text += candidate_table(r.candidates);
    text += "\n* winner   d default\n";
  }
  out << text;
}

}  // namespace tunekit::detail
