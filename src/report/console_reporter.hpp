// The "console" reporter: a header and one table row per candidate (private to src/report).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/reporter.hpp"

namespace tunekit::detail {

// Seconds with an adaptive unit and three significant digits: "812 ns", "4.56 µs", "1.23 ms",
// "2.50 s". "-" for a negative or non-finite value.
std::string format_seconds(double seconds);

// A decision's confidence in words: "ahead of B by 1.23x (95 % low 1.18x): clear" (names
// escaped for the terminal), plus the paired bound when the confirmation ran.
std::string confidence_text(const DecisionConfidence& confidence);
// The final race in one line (empty when it neither ran nor says why not); `winner`: the
// decision's winner, to say when the race changed the search's pick.
std::string final_race_text(const FinalRace& race, std::string_view winner);
// Where the host ran two CPUs around a search (TuneReport::cpu_placement), with a warning when
// it moved them meanwhile; empty where not measured.
std::string placement_text(const CpuPlacement& placement);
// Its readings alone: before, after, the lowest and the waits during the search.
std::string placement_readings(const CpuPlacement& placement);

// " (88 distinct for this key)" when fewer than all `space_size` points compute differently
// for the key (Op::effective_config); "" otherwise (0: not known).
std::string distinct_text(std::size_t distinct_points, std::size_t space_size);

// "2026-12-01T16:42:00Z" (UTC); the number itself when it is no representable time.
std::string iso_time(std::int64_t unix_seconds);

// Terminal columns taken by UTF-8 text (one per code point; ASCII and µ/× are all we print).
std::size_t display_width(std::string_view utf8);

// The first line of `text`, tabs as spaces, other control characters escaped (terminal_safe),
// cut to at most `width` columns with "…" as the last column when something was cut. Never
// splits a UTF-8 sequence.
std::string clip(std::string_view text, std::size_t width);

// A plain table: the columns as wide as their widest cell, two spaces apart, every cell
// escaped for the terminal (terminal_safe), each line after `indent`.
void print_table(std::vector<std::vector<std::string>> rows, const std::string& indent,
                 std::ostream& out);

// Every outside string of the report (names, configs, keys, messages) is escaped with
// terminal_safe before it is printed.
class ConsoleReporter final : public Reporter {
 public:
  // Non-ok rows carry their outcome message, clipped to this many columns.
  static constexpr std::size_t kMessageWidth = 72;

  void write(const TuneReport& report, std::ostream& out) override;
  void write(const ModelReport& report, std::ostream& out) override { write_console(report, out); }
  // Stored choices: in console_stored_choices.cpp.
  void write(const StoredChoiceList& list, std::ostream& out) override;
  void write(const std::vector<StoredChoiceDetail>& shown, std::ostream& out) override;
  void write(const PendingMissList& list, std::ostream& out) override;
  void write(const PendingOutcome& outcome, std::ostream& out) override;
  void write(const std::vector<PendingOutcome>& outcomes, std::ostream& out) override;
  // A stack workload's decisions: in console_stack.cpp.
  void write(const stack::StackSummary& summary, std::ostream& out) override;
  // A copy between two stores (cache push/pull): in console_store_sync.cpp.
  void write(const StoreSyncSummary& summary, std::ostream& out) override;
};

}  // namespace tunekit::detail
