#include "report/tune_report.hpp"

#include <utility>

#include "tunekit/report.hpp"

namespace tunekit {

const CandidateReport* TuneReport::find(std::size_t index) const {
  for (const CandidateReport& c : candidates)
    if (c.index == index) return &c;
  return nullptr;
}

CandidateReport* TuneReport::find(std::size_t index) {
  return const_cast<CandidateReport*>(static_cast<const TuneReport&>(*this).find(index));
}

}  // namespace tunekit

namespace tunekit::detail {

void fill_from_evidence(TuneReport& report, std::vector<CandidateReport> evidence) {
  report.candidates = std::move(evidence);
  for (auto& c : report.candidates) {
    c.winner = c.name == report.winner_name;
    c.is_default = c.name == report.default_name;
    if (c.winner && c.outcome.ok()) report.winner_score = c.score;
    if (c.is_default && c.outcome.ok()) report.default_score = c.score;
  }
  if (report.winner_score > 0 && report.default_score > 0)
    report.speedup = report.default_score / report.winner_score;
}

}  // namespace tunekit::detail
