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
