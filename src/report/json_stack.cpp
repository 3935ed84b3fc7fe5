// The JSON reporter's stack workloads (`tunekit stack tune|explain --json`): one object with
// the operator choices and every level's decision and report.
#include <ostream>

#include <nlohmann/json.hpp>

#include "report/json_reporter.hpp"
#include "tunekit/stack_summary.hpp"

namespace tunekit::detail {

void JsonReporter::write(const stack::StackSummary& summary, std::ostream& out) {
  nlohmann::ordered_json j;
  j["workload"] = summary.workload;
  j["shape"] = summary.shape;
  j["plan"] = summary.plan;
  j["operators"] = nlohmann::ordered_json::array();
  for (const stack::SegmentPick& p : summary.operators)
    j["operators"].push_back({{"step", p.segment},
                              {"op", p.op},
                              {"key", p.key},
                              {"choice", p.candidate},
                              {"default", p.is_default},
                              {"source", to_string(p.source)},
                              {"reason", p.reason}});
  j["levels"] = nlohmann::ordered_json::array();
  for (const stack::StackLevel& level : summary.levels) {
    nlohmann::ordered_json l;
    l["scope"] = to_string(level.scope);
    l["problem"] = level.problem;
    l["choice"] = level.selection.candidate;
    l["reference"] = level.selection.reference;
    l["source"] = to_string(level.selection.source);
    l["report"] = level.report ? nlohmann::ordered_json::parse(stack::report_json(*level.report))
                               : nlohmann::ordered_json(nullptr);
    j["levels"].push_back(std::move(l));
  }
  out << j.dump(indent_) << '\n';
}

}  // namespace tunekit::detail
