// The schedules by name, and what they share.
#include <limits>

#include "tunekit/tuner_options.hpp"

#include "tuner/schedule.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {

const ScheduleRegistry& builtin_schedules() {
  static const ScheduleRegistry registry = [] {
    ScheduleRegistry r("schedule");
    r.add({"full",
           "one full timing window per point; a point that can no longer come within "
           "hopeless_ratio of the best so far is cut",
           "none", make_full_schedule});
    r.add({"racing",
           "round-robin windows over a batch; a point whose median interval lies wholly above "
           "the leader's (or the best so far) by more than the tie band is dropped",
           "round=4 (samples per round), z=1.96, min_samples=8, max_samples=64, "
           "round_warmup=0 (untimed launches before each round after the first)",
           make_racing_schedule});
    return r;
  }();
  return registry;
}

PointResult point_result(const SearchContext& context, std::size_t index) {
  PointResult p{index, Status::skipped, std::numeric_limits<double>::infinity()};
  const CandidateReport* c = context.find(index);
  if (!c) return p;
  p.status = c->outcome.status;
  if (c->outcome.ok()) {
    p.value = c->score;
  } else if (c->outcome.status == Status::hopeless && c->timing && c->timing->median > 0) {
    p.value = c->timing->median;
  }
  return p;
}

void finish_not_started(SearchContext& context, std::size_t index) {
  context.finish(index,
                 {Status::stopped,
                  "not started: the budget left no time for it (its timing "
                  "and the reserve for the winner's rebuild)"},
                 std::nullopt);
}

}  // namespace tunekit::detail

namespace tunekit {

std::vector<PluginDescription> builtin_schedules() {
  return detail::builtin_schedules().describe();
}

}  // namespace tunekit
