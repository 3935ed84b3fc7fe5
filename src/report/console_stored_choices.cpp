// The console reporter's stored choices: `cache ls` (one line each), `cache show` (an entry
// in full), `cache ls --pending` and what `tune --pending` made of each record. Every cell comes
// from the store, which anyone who could write it filled: it is escaped for the terminal.
#include <algorithm>
#include <ctime>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/console_reporter.hpp"
#include "store/evidence_codec.hpp"
#include "tunekit/pending.hpp"
#include "tunekit/terminal_text.hpp"

namespace tunekit::detail {

// A plain table: the columns are as wide as their widest cell, two spaces apart.
void print_table(std::vector<std::vector<std::string>> rows, const std::string& indent,
                 std::ostream& out) {
  for (auto& row : rows)
    for (std::string& cell : row) cell = terminal_safe(cell);
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));
  }
  for (const auto& row : rows) {
    std::string line = indent;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - display_width(row[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

namespace {

constexpr std::size_t kShortDigest = 12;  // identity digits `cache ls` shows

using Rows = std::vector<std::vector<std::string>>;

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

std::string cell_seconds(double seconds) {
  return seconds > 0 ? format_seconds(seconds) : "-";
}

std::string bytes_text(std::uint64_t b) {
  return b >= (std::uint64_t{1} << 30)   ? fmt::format("{} GiB", b >> 30)
         : b >= (std::uint64_t{1} << 20) ? fmt::format("{} MiB", b >> 20)
                                         : fmt::format("{} KiB", b >> 10);
}

// "AMD EPYC 7B13 (cpu, AuthenticAMD, x86_64, 2 compute units, memory 8 GiB, ...)"
std::string device_text_of(const DeviceIdentity& d) {
  std::vector<std::string> parts;
  for (const std::string* v : {&d.backend, &d.vendor, &d.architecture})
    if (!v->empty()) parts.push_back(*v);
  if (d.compute_units != 0) parts.push_back(fmt::format("{} compute units", d.compute_units));
  const std::pair<std::uint64_t, const char*> sizes[] = {
      {d.memory_bytes, "memory"}, {d.l1d_bytes, "L1d"}, {d.l2_bytes, "L2"}, {d.l3_bytes, "L3"}};
  for (const auto& [bytes, label] : sizes)
    if (bytes > 0) parts.push_back(fmt::format("{} {}", label, bytes_text(bytes)));
  if (!d.driver.empty()) parts.push_back("driver " + d.driver);
  std::string text = d.product.empty() ? "(unknown product)" : d.product;
  if (!parts.empty()) text += " (" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
  return text;
}

std::string toolchain_text_of(const Toolchain& t) {
  std::string text = "tunekit " + t.tunekit_version;
  if (!t.compiler.empty()) text += ", " + t.compiler;
  for (const std::string& r : t.runtimes) text += ", " + r;
  return text;
}

std::string environment_text_of(const EnvironmentTags& tags) {
  if (tags.empty()) return "(no tags)";
  std::vector<std::string> parts;
  for (const auto& [name, value] : tags) parts.push_back(name + "=" + value);
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The median and the minimum of a reading: the stored statistics, else from the samples.
std::pair<double, double> median_and_min(const TimingResult& t) {
  std::vector<double> values = t.samples;
  double median = 0;
  double minimum = 0;
  if (!values.empty()) {
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    median = values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
    minimum = values.front();
  }
  return {t.median > 0 ? t.median : median, t.min > 0 ? t.min : minimum};
}

void print_evidence(const StoredChoice& c, std::ostream& out) {
  if (const auto& s = c.search) {
    out << terminal_safe(
               fmt::format("  search       {} / {}, seed {}, {} of {} points{}, stopped by {}",
                           s->strategy, s->schedule, s->seed, s->evaluated, s->space_size,
                           distinct_text(s->distinct_points, s->space_size), s->stop_reason))
        << '\n';
    if (s->confidence) out << "  confidence   " << confidence_text(*s->confidence) << '\n';
    if (s->final_race.finalists > 0)
      out << "  final race   " << final_race_text(s->final_race, c.winner) << '\n';
    if (const std::string placement = placement_text(s->cpu_placement); !placement.empty())
      out << "  CPUs         " << placement << '\n';
  }
  if (c.evidence.empty()) {
    out << "  evidence     (none stored)\n";
    return;
  }
  out << "  evidence:\n";
  Rows rows{{"candidate", "status", "median", "min", "samples", "message"}};
  for (const CandidateReport& e : c.evidence) {
    const TimingResult timing = e.timing.value_or(TimingResult{});
    const auto [median, minimum] = median_and_min(timing);
    const std::size_t samples = timing.samples.size();
    rows.push_back({e.name == c.winner ? e.name + " *" : e.name,
                    std::string(to_string(e.outcome.status)), cell_seconds(median),
                    cell_seconds(minimum), samples ? std::to_string(samples) : "-",
                    one_line(e.outcome.message)});
  }
  print_table(std::move(rows), "    ", out);
  out << "    (* the winner)\n";
}

// Why the entry no longer serves, and the candidates that failed live for it.
void print_stale_and_bans(const StoredChoiceDetail& d, std::ostream& out) {
  if (!d.choice.stale.empty()) {
    out << "  stale: " << terminal_safe(one_line(d.choice.stale))
        << "  (kept as evidence, not served)\n";
  }
  for (const BannedCandidate& b : d.bans) {
    out << terminal_safe(fmt::format("  banned: {} \u2014 {}  ({})", b.candidate,
                                     one_line(b.reason), iso_time(b.banned_at)))
        << '\n';
  }
}

void print_choice(const StoredChoiceDetail& d, std::ostream& out) {
  const StoredChoice& c = d.choice;
  out << terminal_safe(fmt::format("{}  {}", c.op, c.key)) << '\n';
  Rows rows{
      {"identity", c.identity_digest},
      {"key digest", c.key_digest},
      {"winner", fmt::format("{}  ({})", c.winner, c.winner_config)},
      {"created", fmt::format("{}  by tunekit {}", iso_time(c.created_at), c.tunekit_version)},
      {"budget cut", c.budget_cut ? "yes (a later search without a budget replaces it)" : "no"},
      {"measured", c.measured ? "yes" : "no"},
      {"device", device_text_of(c.device)},
      {"toolchain", toolchain_text_of(c.toolchain)},
      {"environment", environment_text_of(c.environment)},
      {"numerics", c.numerics_policy},
      {"candidates", fmt::format("{} (candidate-set checksum)", c.candidates)},
  };
  if (c.scope != "kernel") rows.insert(rows.begin() + 1, {"scope", c.scope + " (stack decision)"});
  if (c.search && !c.search->bucket.empty()) {
    rows.insert(rows.begin() + 1,
                {"bucket", c.search->bucket + " (one entry serves it, measured at the key above)"});
  }
  print_table(std::move(rows), "  ", out);
  print_stale_and_bans(d, out);
  print_evidence(c, out);
}

}  // namespace

std::string iso_time(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  if (gmtime_r(&t, &utc) == nullptr) return std::to_string(unix_seconds);
  char text[32];
  if (std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
    return std::to_string(unix_seconds);
  return text;
}

void ConsoleReporter::write(const StoredChoiceList& list, std::ostream& out) {
  const std::string read_only =
      list.read_only.empty() ? "" : fmt::format(" (read-only: {})", list.read_only);
  if (list.choices.empty()) {
    out << terminal_safe(fmt::format("the store {} is empty{}{}", list.store,
                                     list.op.empty() ? "" : " for op " + list.op, read_only))
        << '\n';
    return;
  }
  // The scope column appears once the store holds stack decisions beside kernel choices.
  const bool scoped = std::any_of(list.choices.begin(), list.choices.end(),
                                  [](const StoredChoice& c) { return c.scope != "kernel"; });
  Rows rows{{"op", "key", "winner", "created", "budget_cut", "identity"}};
  if (scoped) rows[0].insert(rows[0].begin() + 1, "scope");
  std::size_t stale = 0;
  for (const StoredChoice& c : list.choices) {
    stale += c.stale.empty() ? 0 : 1;
    rows.push_back({c.op, c.key, c.stale.empty() ? c.winner : c.winner + " (stale)",
                    iso_time(c.created_at), c.budget_cut ? "yes" : "no",
                    c.identity_digest.substr(0, kShortDigest)});
    if (scoped) rows.back().insert(rows.back().begin() + 1, c.scope);
  }
  print_table(std::move(rows), "", out);
  out << terminal_safe(fmt::format("{} stored choice{} in {}{}", list.choices.size(),
                                   list.choices.size() == 1 ? "" : "s", list.store, read_only))
      << '\n';
  if (stale > 0) {
    out << fmt::format("{} stale (kept as evidence, not served: 'tunekit cache show' says why)\n",
                       stale);
  }
}

void ConsoleReporter::write(const std::vector<StoredChoiceDetail>& shown, std::ostream& out) {
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (i > 0) out << '\n';
    print_choice(shown[i], out);
  }
}

void ConsoleReporter::write(const PendingMissList& list, std::ostream& out) {
  const std::string for_op = list.op.empty() ? "" : " for op " + list.op;
  if (list.misses.empty()) {
    out << terminal_safe(fmt::format("no pending misses in {}{}", list.store, for_op)) << '\n';
    return;
  }
  Rows rows{{"op", "key", "count", "first seen", "last seen", "device", "identity"}};
  for (const PendingMiss& m : list.misses) {
    // tune --pending tunes only this machine's: the device says whose a record is.
    const std::string device = device_from_text(m.device).product;
    rows.push_back({m.op, m.key, std::to_string(m.count), iso_time(m.first_seen),
                    iso_time(m.last_seen), device.empty() ? "-" : device,
                    m.identity_digest.substr(0, kShortDigest)});
  }
  print_table(std::move(rows), "", out);
  out << terminal_safe(fmt::format("{} pending miss{} in {} ('tunekit tune --pending' tunes them)",
                                   list.misses.size(), list.misses.size() == 1 ? "" : "es",
                                   list.store))
      << '\n';
}

void ConsoleReporter::write(const PendingOutcome& o, std::ostream& out) {
  if (o.status == PendingStatus::tuned) {
    // A cut search is stored budget_cut: an unrestricted search replaces it later.
    out << terminal_safe(fmt::format("tuned  {}  {}  -> {} ({:.2f}x over the default{})", o.miss.op,
                                     o.miss.key, o.report.winner_name, o.report.speedup,
                                     o.report.budget.cut ? "; budget cut" : ""))
        << '\n';
  } else {
    out << terminal_safe(fmt::format("kept   {}  {}  {}: {}", o.miss.op, o.miss.key,
                                     to_string(o.status), o.why))
        << '\n';
  }
  out.flush();
}

void ConsoleReporter::write(const std::vector<PendingOutcome>& outcomes, std::ostream& out) {
  std::size_t tuned = 0, failed = 0;
  for (const PendingOutcome& o : outcomes) {
    tuned += o.kept() ? 0 : 1;
    failed += o.failed() ? 1 : 0;
  }
  const std::size_t elsewhere = outcomes.size() - tuned - failed;
  out << fmt::format("{} of {} pending miss{} tuned{}{}\n", tuned, outcomes.size(),
                     outcomes.size() == 1 ? "" : "es",
                     failed ? fmt::format("; {} kept (see above)", failed) : "",
                     elsewhere ? fmt::format("; {} left for the device{} that recorded them",
                                             elsewhere, elsewhere == 1 ? "" : "s")
                               : "");
}

}  // namespace tunekit::detail
