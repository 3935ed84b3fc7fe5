// The console reporter's stack workloads (`tunekit stack tune|explain`): the kernel choice of
// each op under the workload, then each higher level's decision with its report.
#include <ostream>
#include <string>
#include <vector>

#include "report/console_reporter.hpp"
#include "tunekit/stack_summary.hpp"
#include "tunekit/terminal_text.hpp"

namespace tunekit::detail {

void ConsoleReporter::write(const stack::StackSummary& summary, std::ostream& out) {
  out << terminal_safe(summary.workload) << ' ' << terminal_safe(summary.shape) << '\n';
  if (!summary.plan.empty()) out << "runs: " << terminal_safe(summary.plan) << '\n';
  out << "\noperator scope (the kernel tuner's choice for each op's key):\n";
  std::vector<std::vector<std::string>> rows{{"step", "op", "key", "choice", "source"}};
  for (const stack::SegmentPick& p : summary.operators)
    rows.push_back({p.segment, p.op, p.key, p.candidate + (p.is_default ? " (default)" : ""),
                    std::string(to_string(p.source))});
  print_table(std::move(rows), "  ", out);
  for (const stack::StackLevel& level : summary.levels) {
    out << '\n'
        << to_string(level.scope) << " scope (" << terminal_safe(level.problem)
        << "): " << terminal_safe(level.selection.candidate)
        << (level.selection.reference ? " (the reference)" : "") << ", "
        << to_string(level.selection.source) << '\n';
    if (level.report)
      stack::write_text(*level.report, out);
    else
      out << "  served without a tune in this process: no paired scores to show\n";
  }
}

}  // namespace tunekit::detail
