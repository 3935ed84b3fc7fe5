// The "json" reporter: every TuneReport field as one JSON object (private to src/report).
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "tunekit/reporter.hpp"

namespace tunekit::detail {

// Keys keep a reading order: identity, decision, accounting, then candidates.
nlohmann::ordered_json report_json(const TuneReport& report);
nlohmann::ordered_json timing_json(const TimingResult& timing);
// How the search ran: strategy, schedule, seed, stop reason, budget.
nlohmann::ordered_json search_json(const TuneReport& report);
// Stored evidence: {"search": {...}, "candidates": [...]} (evidence_reader.hpp reads it back,
// and the older bare candidates array too).
std::string evidence_text(const TuneReport& report);

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(int indent = 2) : indent_(indent) {}
  void write(const TuneReport& report, std::ostream& out) override;

 private:
  int indent_;
};

}  // namespace tunekit::detail
