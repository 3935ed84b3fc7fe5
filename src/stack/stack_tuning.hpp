// Tuning one stack problem: the reference's trial, each alternative screened (banned,
// eligibility, scratch), validated against the reference with a bounded readback, then timed
// in A B B A pairs with it and scored by stats::paired_score. Runs with no lock held.
// Private to src/stack.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stack/stack_readback.hpp"
#include "tunekit/stack.hpp"

namespace tunekit::detail {

struct StackTuned {
  std::size_t index = 0;  // the selection (the reference when nothing beat it)
  stack::DecisionSource source = stack::DecisionSource::tuned;
  stack::StackReport report;
  std::size_t rejections = 0;  // alternatives declined or failed
};

class StackTuning {
 public:
  StackTuning(const stack::Problem& problem, const stack::CandidateSet& set,
              const stack::StackOptions& options, stack::TrialRunner& runner,
              std::map<std::string, std::string> banned);
  StackTuned run();
  // One validation of candidate i against the reference (a stored decision's first use in
  // this process): nullopt when it passes.
  std::optional<stack::Failure> revalidate(std::size_t i);
  // What a tune would decline candidate i for before running it (banned, ineligible, over
  // the scratch limit); nullopt when it may run.
  std::optional<stack::Failure> screen(std::size_t i);

 private:
  stack::TrialResult trial(const stack::StackCandidate& candidate);
  // Fills entry i's status when it is banned, ineligible or over the scratch limit.
  bool screened_out(std::size_t i, stack::ReportEntry& entry);
  void measure(std::size_t i, stack::ReportEntry& entry, const StackReadback& expected);
  std::size_t choose(std::vector<stack::ReportEntry>& entries) const;
  void bound(StackTuned& tuned) const;

  const stack::Problem& problem_;
  const stack::CandidateSet& set_;
  const stack::StackOptions& options_;
  stack::TrialRunner& runner_;
  std::map<std::string, std::string> banned_;  // name -> the live error that banned it
  std::size_t ref_;
};

}  // namespace tunekit::detail
