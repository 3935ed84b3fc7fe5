// What `tunekit stack tune|explain` shows for a stack workload: the kernel decisions under it
// (operator scope) and each higher level's decision with its report (paired scores,
// dependencies). Reporters render it (tunekit/reporter.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tunekit/routine.hpp"
#include "tunekit/stack.hpp"
#include "tunekit/stack_report.hpp"

namespace tunekit::stack {

struct StackLevel {
  Selection selection;                // what the controller returned and why
  std::optional<StackReport> report;  // the tune's evidence (absent: served without a tune)
  std::string problem;                // the problem's name, e.g. "attention_block"
  Scope scope = Scope::graph;
};

struct StackSummary {
  std::string workload;  // e.g. "attention"
  std::string shape;     // e.g. "tokens=2048,d=512,heads=8"
  std::vector<SegmentPick> operators;
  std::vector<StackLevel> levels;  // lowest scope first (graph, then application)
  std::string plan;                // what executes, in words
};

}  // namespace tunekit::stack
