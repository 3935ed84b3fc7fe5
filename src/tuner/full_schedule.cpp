// full: every point gets one full window in turn; a point whose median can no longer come
// within timing.hopeless_ratio of the best so far is cut (median ranking only; the default,
// measured first, is always measured in full).
#include "tuner/schedule.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {
namespace {

class FullSchedule final : public Schedule {
 public:
  std::string_view name() const override { return "full"; }

  std::vector<PointResult> run(std::span<const std::size_t> points, SearchContext& context,
                               const MayStart& may_start) override {
    std::vector<PointResult> out;
    const std::size_t def = context.default_index();
    for (std::size_t k = 0; k < points.size(); ++k) {
      const std::size_t i = points[k];
      if (!may_start(i, 0)) {
        // Out of time: this one and the rest of the batch (built, never timed) are not started.
        for (std::size_t rest = k; rest < points.size(); ++rest)
          finish_not_started(context, points[rest]);
        break;
      }
      if (context.admit(i)) {
        TimingOptions timing = context.timing_options(i);
        if (i != def && context.incumbent() > 0 &&
            context.options().decide.statistic == Statistic::median)
          timing.hopeless_against = context.incumbent();
        TimingResult t = context.measure(i, timing);
        Outcome o = t.outcome;
        context.finish(i, std::move(o), std::move(t));
        context.drop_trial(i);
      }
      out.push_back(point_result(context, i));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Schedule> make_full_schedule(SpecOptions&) {
  return std::make_unique<FullSchedule>();
}

}  // namespace tunekit::detail
