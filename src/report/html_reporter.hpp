// The "html" reporter: one self-contained page (inline SVG and CSS, no script, nothing
// fetched: a Content-Security-Policy forbids it) per report (private to src/report).
#pragma once

#include <iosfwd>

#include "tunekit/reporter.hpp"

namespace tunekit::detail {

class HtmlReporter final : public Reporter {
 public:
  // One decision: its samples, speed vs default, search curves, failures.
  void write(const TuneReport& report, std::ostream& out) override;
  // The cost model's ranking: model score vs the stored measurement, with Spearman.
  void write(const ModelReport& report, std::ostream& out) override;
  // The fleet view (one row per key), then a section per decision.
  void write(const StoredChoiceList& list, std::ostream& out) override;
  void write(const std::vector<StoredChoiceDetail>& shown, std::ostream& out) override;
  void write_decisions(const DecisionsReport& report, std::ostream& out) override;
  // Pending misses, their outcomes and stack summaries have no page: UsageError.
  void write(const PendingMissList& list, std::ostream& out) override;
  void write(const PendingOutcome& outcome, std::ostream& out) override;
  void write(const std::vector<PendingOutcome>& outcomes, std::ostream& out) override;
  void write(const stack::StackSummary& summary, std::ostream& out) override;
  void write(const StoreSyncSummary& summary, std::ostream& out) override;  // no page either
};

}  // namespace tunekit::detail
