#include "tuner/tuning_evaluator.hpp"

#include <algorithm>

#include "tuner/admission.hpp"
#include "tuner/compile_pass.hpp"

namespace tunekit::detail {
namespace {

// Builds that took under a millisecond so far are not worth threads.
bool slow_builds_so_far(const SearchBudget& budget) {
  return budget.projected_build() >= 1e-3;
}

// Whether building a candidate can cost time at all: the op compiles (a build step), or the
// device's trials build beyond it (a program cache, a loaded module). A property of the op and
// the device, not of the builds so far: a build that hit a cache (a second key in one process)
// says nothing of the next.
bool builds_can_cost(SearchContext& context) {
  return context.op().has_build_step() || context.device().trial_builds_beyond_op();
}

}  // namespace

TuningEvaluator::TuningEvaluator(SearchContext& context, Schedule& schedule, SearchBudget& budget,
                                 int build_threads, std::function<double()> now)
    : context_(context),
      schedule_(schedule),
      budget_(budget),
      build_threads_(std::max(1, build_threads)),
      now_(std::move(now)) {}

void TuningEvaluator::out_of_time(std::string what) {
  if (stopped_.empty()) stopped_ = "time budget";
  BudgetReport& b = context_.report().budget;
  if (b.stopped.empty()) b.stopped = std::move(what);
}

std::vector<std::size_t> TuningEvaluator::compile_pass(std::span<const std::size_t> points,
                                                       std::vector<PointResult>& out) {
  const std::size_t def = context_.default_index();
  const OpBase& op = context_.op();
  std::vector<std::size_t> built;
  std::size_t k = 0;
  while (k < points.size()) {
    // A chunk of at most build_threads points, each admitted by the budget when it starts.
    std::vector<std::size_t> chunk;
    std::vector<std::unique_ptr<Trial>> trials;
    while (k < points.size() && chunk.size() < static_cast<std::size_t>(build_threads_)) {
      const std::size_t i = points[k];
      if (i != def && !budget_.admits_build()) break;
      ++k;
      // Nothing is built for a candidate the numerics policy or the key turns away.
      if (auto refused = precheck(op.candidate(i), context_.key(),
                                  context_.options().decide.numerics_policy)) {
        context_.finish(i, *refused, std::nullopt);
        out.push_back(point_result(context_, i));
        continue;
      }
      chunk.push_back(i);
      trials.push_back(context_.build_trial(i));
    }
    if (chunk.empty() && k < points.size()) break;  // the budget admits no more builds
    // Threads only pay off for real builds: cheap ones run inline.
    const int threads = slow_builds_so_far(budget_) ? build_threads_ : 1;
    const double start = now_();
    const std::vector<BuildVerdict> verdicts = build_all(trials, threads, now_);
    context_.report().seconds_compiling += now_() - start;
    for (std::size_t c = 0; c < chunk.size(); ++c) {
      budget_.saw_build(verdicts[c].seconds);
      context_.built(chunk[c], verdicts[c].outcome, verdicts[c].seconds);
      if (verdicts[c].outcome.ok()) {
        built.push_back(chunk[c]);
      } else {
        out.push_back(point_result(context_, chunk[c]));
      }
    }
  }
  if (k < points.size()) {
    for (; k < points.size(); ++k) {
      finish_not_started(context_, points[k]);
      ++context_.report().budget.not_started;
    }
    out_of_time("builds: a proposed point's build (and the reserve) no longer fit");
  }
  return built;
}

std::vector<PointResult> TuningEvaluator::evaluate(std::span<const std::size_t> batch) {
  // A large batch goes in rounds of a few builds' worth (built, then timed), so a budget is
  // never spent building points there is no time left to measure, and (racing admits every
  // point of a round before it times any) not spent validating them. Where builds cannot cost
  // (host code on the CPU device) and no time budget binds, there is nothing to protect: the
  // batch is one round, and a racing schedule races all its points side by side, in the same
  // minutes.
  const std::size_t round =
      builds_can_cost(context_) || budget_.limited()
          ? std::max<std::size_t>(8, 2 * static_cast<std::size_t>(build_threads_))
          : std::max<std::size_t>(1, batch.size());
  std::vector<PointResult> out;
  for (std::size_t at = 0; at < batch.size(); at += round) {
    const std::span<const std::size_t> part = batch.subspan(at, std::min(round, batch.size() - at));
    std::vector<PointResult> done = evaluate_round(part);
    out.insert(out.end(), done.begin(), done.end());
    if (!stopped_.empty()) {
      for (std::size_t k = at + part.size(); k < batch.size(); ++k) {
        finish_not_started(context_, batch[k]);
        ++context_.report().budget.not_started;
      }
      break;
    }
  }
  return out;
}

std::vector<PointResult> TuningEvaluator::evaluate_round(std::span<const std::size_t> batch) {
  std::vector<PointResult> out;
  const std::vector<std::size_t> built = compile_pass(batch, out);
  const std::size_t def = context_.default_index();
  bool refused = false;
  auto may_start = [&](std::size_t i, double lead) {
    const bool ok =
        i == def ? !budget_.spent() : budget_.admits_timing(context_.projected_start(i) + lead);
    refused |= !ok;
    return ok;
  };
  std::vector<PointResult> timed = schedule_.run(built, context_, may_start);
  out.insert(out.end(), timed.begin(), timed.end());
  if (refused || (budget_.limited() && !budget_.admits_timing())) {
    // Built but never timed: counted from the report (the schedule finished them as stopped).
    for (std::size_t i : built) {
      const CandidateReport* c = context_.find(i);
      if (c && c->outcome.status == Status::stopped && !c->timing)
        ++context_.report().budget.not_started;
    }
    out_of_time(
        "timing: windows stopped or not started once the budget less the reserve (the "
        "winner's rebuild, the decision's paired confirmations) was spent");
  }
  return out;
}

}  // namespace tunekit::detail
