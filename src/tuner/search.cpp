#include "tuner/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "tunekit/errors.hpp"
#include "tuner/schedule.hpp"
#include "tuner/search_budget.hpp"
#include "tuner/search_context.hpp"
#include "tuner/shared_evaluator.hpp"
#include "tuner/tuning_evaluator.hpp"

namespace tunekit::detail {
namespace {

std::function<double()> budget_clock(const TunerOptions& options) {
  if (options.measure.now) return options.measure.now;
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

int build_threads(const TunerOptions& options, const Device& device) {
  if (!device.parallel_builds()) return 1;
  if (options.measure.build_threads > 0) return options.measure.build_threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Plan groups (DESIGN §6): candidates grouped by priority, searched in ascending order; the
// search stops after the first group with a measured, valid candidate. One group (every space
// op, most lists) is the whole space.
std::vector<std::vector<std::size_t>> plan_groups(const OpBase& op) {
  std::map<int, std::vector<std::size_t>> groups;
  if (op.space() == nullptr) {
    for (std::size_t i = 0; i < op.size(); ++i) groups[op.candidate(i).group].push_back(i);
  }
  std::vector<std::vector<std::size_t>> out;
  for (auto& [g, members] : groups) out.push_back(std::move(members));
  return out;
}

// One group's points as a space of their own: the strategy's index i is members[i].
class GroupEvaluator final : public Evaluator {
 public:
  GroupEvaluator(Evaluator& inner, const SearchContext& context,
                 const std::vector<std::size_t>& members)
      : inner_(inner), context_(context), members_(members) {}
  std::vector<PointResult> evaluate(std::span<const std::size_t> batch) override {
    std::vector<std::size_t> fresh;
    std::vector<PointResult> out;
    for (std::size_t i : batch) {
      const std::size_t index = members_.at(i);
      if (const CandidateReport* c = context_.find(index);
          c && c->outcome.status != Status::skipped) {
        PointResult known = point_result(context_, index);  // the default, evaluated first
        known.index = i;
        out.push_back(known);
      } else {
        fresh.push_back(index);
      }
    }
    for (PointResult p : inner_.evaluate(fresh)) {
      p.index = static_cast<std::size_t>(
          std::lower_bound(members_.begin(), members_.end(), p.index) - members_.begin());
      out.push_back(p);
    }
    return out;
  }
  double elapsed_seconds() const override { return inner_.elapsed_seconds(); }
  std::string stopped() const override { return inner_.stopped(); }

 private:
  Evaluator& inner_;
  const SearchContext& context_;
  const std::vector<std::size_t>& members_;
};

Enumeration group_space(const Enumeration& all, const std::vector<std::size_t>& members) {
  std::vector<std::uint32_t> flat;
  for (std::size_t i : members) {
    const auto point = all.point(i);
    flat.insert(flat.end(), point.begin(), point.end());
  }
  return Enumeration::from_points(all.parameters(), std::move(flat));
}

// `settings` with its points as indices into `members` (ascending op indices): the points
// evaluated first and the prior's per-point views. A first point that is not a member is
// left out.
SearchSettings within(const SearchSettings& settings, const std::vector<std::size_t>& members) {
  auto at = [&](std::size_t index) -> std::optional<std::size_t> {
    const auto it = std::lower_bound(members.begin(), members.end(), index);
    if (it == members.end() || *it != index) return std::nullopt;
    return static_cast<std::size_t>(it - members.begin());
  };
  SearchSettings out = settings;
  out.first.clear();
  for (std::size_t i : settings.first)
    if (const auto g = at(i)) out.first.push_back(*g);
  if (settings.prior.default_index) out.prior.default_index = at(*settings.prior.default_index);
  auto pick = [&](const auto& per_point, auto& into) {
    if (per_point.empty()) return;
    into.clear();
    for (std::size_t m : members) into.push_back(per_point.at(m));
  };
  pick(settings.prior.model_seconds, out.prior.model_seconds);
  pick(settings.prior.model_rank, out.prior.model_rank);
  return out;
}

// The points searched first: the default (the floor), then the op's anchors (a library
// solution). They stand for their classes of points that compute the same thing.
std::vector<std::size_t> first_points(const OpBase& op, std::size_t default_index) {
  std::vector<std::size_t> first{default_index};
  for (std::size_t a : op.anchor_indices())
    if (a != default_index) first.push_back(a);
  return first;
}

// The space a strategy searches: `members` (the points that compute differently for the key,
// Op::effective_config), or the whole space when they are all of it.
Enumeration searched_space(const OpBase& op, const std::vector<std::size_t>& members) {
  if (members.size() == op.size()) return op.enumeration();
  return group_space(op.enumeration(), members);
}

// The search over `members` only (the points that compute differently for the key,
// Op::effective_config), or over the whole space when they are all of it.
SearchResult search_members(const OpBase& op, Strategy& strategy, Evaluator& evaluator,
                            const SearchContext& context, const SearchSettings& settings,
                            const std::vector<std::size_t>& members) {
  if (members.size() == op.size()) return search(op.enumeration(), strategy, evaluator, settings);
  GroupEvaluator distinct(evaluator, context, members);
  return search(group_space(op.enumeration(), members), strategy, distinct,
                within(settings, members));
}

struct Searched {
  std::string stop_reason;
  std::size_t evaluated = 0;
};

// Searches group after group; the first with a valid candidate ends the plan.
Searched search_groups(const OpBase& op, Strategy& strategy_of_first, const TunerOptions& options,
                       TuningEvaluator& evaluator, SearchContext& context, SearchSettings settings,
                       const std::vector<std::size_t>& distinct) {
  const std::vector<std::vector<std::size_t>> groups = plan_groups(op);
  if (groups.size() <= 1) {
    const SearchResult result =
        search_members(op, strategy_of_first, evaluator, context, settings, distinct);
    return {result.stop_reason, result.history.size()};
  }
  // The floor and the anchors, whatever their groups.
  evaluator.evaluate(settings.first);
  const std::vector<std::size_t> first = settings.first;
  auto is_first = [&](std::size_t i) {
    return std::find(first.begin(), first.end(), i) != first.end();
  };
  Searched done{"", first.size()};
  settings.first.clear();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::unique_ptr<Strategy> strategy = StrategyRegistry::builtin().make(options.decide.strategy);
    GroupEvaluator group(evaluator, context, groups[g]);
    const SearchResult result = search(group_space(op.enumeration(), groups[g]), *strategy, group,
                                       within(settings, groups[g]));
    done.stop_reason = result.stop_reason;
    for (std::size_t i : groups[g]) done.evaluated += !is_first(i) && context.find(i) != nullptr;
    const bool valid = std::any_of(groups[g].begin(), groups[g].end(), [&](std::size_t i) {
      const CandidateReport* c = context.find(i);
      return c && c->outcome.ok();
    });
    if (!evaluator.stopped().empty()) break;
    if (valid) {
      for (std::size_t h = g + 1; h < groups.size(); ++h)
        for (std::size_t i : groups[h])
          if (!is_first(i))
            context.entry(i).outcome = {Status::skipped,
                                        "an earlier plan group already produced a valid candidate"};
      done.stop_reason = "plan group " + std::to_string(g) + " produced a valid candidate";
      done.evaluated = op.size();  // the plan is complete
      break;
    }
  }
  return done;
}

// The search with its points shared among the store's workers (docs/fleet.md "Shared
// searches"); alone when the queue cannot open it.
Searched search_shared(const OpBase& op, Strategy& strategy, TuningEvaluator& evaluator,
                       SearchContext& context, const SearchSettings& settings,
                       const std::vector<std::size_t>& distinct, const SharedRun& shared,
                       std::function<bool()> out_of_time) {
  const Log& log = context.options().hooks.log;
  std::int64_t id = 0;
  try {
    id = shared.queue->open_search(shared.search);
  } catch (const WorkQueueError& e) {
    log.warn(std::string(e.what()) + ": searching " + op.name() + " in this process alone");
    const SearchResult result =
        search_members(op, strategy, evaluator, context, settings, distinct);
    return {result.stop_reason, result.history.size()};
  }
  // Closed however the search ends (a lost device, a misuse): workers stop on it at once.
  struct Closer {
    WorkQueue& queue;
    std::int64_t id;
    const Log& log;
    ~Closer() {
      try {
        queue.close_search(id);
      } catch (const WorkQueueError& e) {  // the server drops it once nobody collects from it
        log.warn(std::string(e.what()) + ": the shared search stays listed until it expires");
      }
    }
  } closer{*shared.queue, id, log};
  SharedEvaluator sharing(evaluator, context, *shared.queue, id, shared.search.coordinator,
                          std::move(out_of_time));
  const SearchResult result = search_members(op, strategy, sharing, context, settings, distinct);
  sharing.decide();
  log.info("shared search of " + op.name() + " " + context.key().text() + ": " +
           std::to_string(sharing.remote_points()) + " points evaluated by workers, " +
           std::to_string(sharing.local_items()) + " of the queued ones here");
  return {result.stop_reason, result.history.size()};
}

}  // namespace

void check_search_options(const TunerOptions& options) {
  StrategyRegistry::builtin().make(options.decide.strategy);  // an unknown name or option throws
  builtin_schedules().make(options.decide.schedule);
  if (!(options.decide.budget_seconds >= 0) || !std::isfinite(options.decide.budget_seconds))
    throw UsageError(
        "TunerOptions: decide.budget_seconds must be finite and >= 0 (0: no budget), e.g. 90");
  if (options.measure.build_threads < 0)
    throw UsageError(
        "TunerOptions: measure.build_threads must be >= 0 (0: one per hardware thread)");
  if (!(options.decide.limit >= 0) || !std::isfinite(options.decide.limit))
    throw UsageError("TunerOptions: decide.limit must be finite and >= 0 seconds (0: off)");
  const ShareOptions& share = options.decide.share;
  if (!(share.item_ttl_seconds >= 0.1 && share.item_ttl_seconds <= 86400))
    throw UsageError(
        "TunerOptions: decide.share.item_ttl_seconds must be in [0.1, 86400] seconds, e.g. 30");
  if (!(share.poll_seconds >= 0.001 && share.poll_seconds <= 60))
    throw UsageError("TunerOptions: decide.share.poll_seconds must be in [0.001, 60], e.g. 0.05");
  if (share.max_attempts < 1 || share.max_attempts > 100)
    throw UsageError("TunerOptions: decide.share.max_attempts must be in [1, 100], e.g. 3");
  if (share.remeasure_top > 1000000)
    throw UsageError("TunerOptions: decide.share.remeasure_top must be at most 1000000, e.g. 3");
}

bool search_is_restricted(const TunerOptions& options, const OpBase& op, const Key& key) {
  if (options.decide.budget_seconds > 0 || options.decide.budget_evaluations > 0) return true;
  // At a key where few points compute differently, `auto` measures them all: not pruned.
  const std::vector<std::size_t> distinct =
      op.distinct_points(key, first_points(op, op.default_index(key)));
  return StrategyRegistry::builtin()
      .make(options.decide.strategy)
      ->prunes(searched_space(op, distinct));
}

TuneReport run_search(Device& device, const OpBase& op, const Key& key, const TunerOptions& options,
                      const SearchPrior& prior, const std::map<std::size_t, std::string>& banned,
                      const SharedRun* shared) {
  const std::function<double()> now = budget_clock(options);
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Strategy> strategy = StrategyRegistry::builtin().make(options.decide.strategy);
  std::unique_ptr<Schedule> schedule = builtin_schedules().make(options.decide.schedule);
  SearchBudget budget(options.decide.budget_seconds, now);
  SearchContext context(device, op, key, options);
  for (const auto& [index, why] : banned) context.ban(index, why);
  TuneReport& r = context.report();
  r.strategy = options.decide.strategy;
  r.schedule = options.decide.schedule;
  r.seed = options.decide.seed;
  r.budget.seconds = options.decide.budget_seconds;
  r.budget.evaluations = options.decide.budget_evaluations;
  if (context.prepare_inputs()) {
    context.start_placement();
    if (budget.limited()) {
      budget.hold_for_decision([&context](double cap) { return context.decision_cost(cap); },
                               options.decide.confirm_share);
      context.set_stop([&budget] { return !budget.admits_timing(); });
      context.set_time_left([&budget] { return budget.seconds() - budget.elapsed(); });
      context.set_seconds_to_stop(
          [&budget] { return budget.seconds() - budget.reserve() - budget.elapsed(); });
    }
    TuningEvaluator evaluator(context, *schedule, budget, build_threads(options, device), now);
    SearchSettings settings;
    if (options.decide.budget_evaluations > 0)
      settings.budget.evaluations = options.decide.budget_evaluations;
    settings.seed = options.decide.seed;
    settings.prior = prior;
    settings.prior.default_index = r.default_index;
    settings.prior.time_budget = options.decide.budget_seconds > 0;
    // The floor first, whatever the budget; then the op's anchors (a library solution).
    settings.first = first_points(op, r.default_index);
    // The points that compute differently for this key: the others are never proposed.
    const std::vector<std::size_t> distinct = op.distinct_points(key, settings.first);
    r.distinct_points = distinct.size();
    context.set_progress_total(
        options.decide.budget_evaluations > 0
            ? std::min(distinct.size(), options.decide.budget_evaluations + settings.first.size())
            : distinct.size());
    const Searched result =
        shared && plan_groups(op).size() <= 1
            ? search_shared(op, *strategy, evaluator, context, settings, distinct, *shared,
                            [&budget] { return budget.limited() && !budget.admits_timing(); })
            : search_groups(op, *strategy, options, evaluator, context, settings, distinct);
    r.stop_reason = result.stop_reason;
    r.budget.reserve_seconds = budget.reserve();
    const bool exhausted = result.evaluated >= distinct.size();
    r.budget.cut = !exhausted && (result.stop_reason == "evaluation budget" ||
                                  result.stop_reason == "time budget" ||
                                  strategy->prunes(searched_space(op, distinct)));
    if (r.budget.cut && r.budget.stopped.empty()) {
      const std::size_t left = distinct.size() - std::min(distinct.size(), result.evaluated);
      r.budget.stopped =
          result.stop_reason == "evaluation budget"
              ? "the evaluation budget: " + std::to_string(left) + " points never proposed"
              : "the strategy pruned: " + std::to_string(left) +
                    " points left unmeasured by design";
    }
    // The best readings timed again side by side, in what the budget held for it.
    context.final_race(
        [&](std::size_t, double lead) {
          return !budget.limited() || budget.admits_timing(context.prepare_seconds() + lead);
        },
        [&] {
          return budget.limited() ? budget.seconds() - budget.reserve() - budget.elapsed()
                                  : HUGE_VAL;
        });
    context.choose();
    context.end_placement();
    const CandidateReport* def = context.find(r.default_index);
    if (def && def->outcome.status == Status::stopped) {
      // The budget was spent before the floor could be measured: the default ships, and
      // nothing is stored (no clean measurement).
      r.source = Source::budget_floor_unmeasured;
      r.winner = r.default_index;
      r.winner_name = r.default_name;
      r.winner_score = 0;
      r.speedup = 1;
      for (CandidateReport& c : r.candidates) c.winner = c.index == r.default_index;
      r.reason = "the budget was spent before the default could be measured: the default ships";
    }
  }
  r.seconds_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(r);
}

}  // namespace tunekit::detail
