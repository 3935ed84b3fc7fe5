// The "json" reporter: every TuneReport field as one JSON object (private to src/report).
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "tunekit/reporter.hpp"

namespace tunekit::detail {

// Keys keep a reading order: identity, decision, accounting, then candidates.
// Candidates, timings and the search record are written by store/evidence_codec.hpp (the
// stored evidence has the same shape).
nlohmann::ordered_json report_json(const TuneReport& report);

class JsonReporter final : public Reporter {
 public:
  explicit JsonReporter(int indent = 2) : indent_(indent) {}
  void write(const TuneReport& report, std::ostream& out) override;
  void write(const ModelReport& report, std::ostream& out) override;
  // Stored choices: in json_stored_choices.cpp.
  void write(const StoredChoiceList& list, std::ostream& out) override;
  void write(const std::vector<StoredChoiceDetail>& shown, std::ostream& out) override;
  void write(const PendingMissList& list, std::ostream& out) override;
  void write(const PendingOutcome& outcome, std::ostream& out) override;
  void write(const std::vector<PendingOutcome>& outcomes, std::ostream& out) override;
  // A stack workload's decisions: in json_stack.cpp.
  void write(const stack::StackSummary& summary, std::ostream& out) override;
  // A copy between two stores (cache push/pull): in json_store_sync.cpp.
  void write(const StoreSyncSummary& summary, std::ostream& out) override;

 private:
  int indent_;
};

}  // namespace tunekit::detail
