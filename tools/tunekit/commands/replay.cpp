// tunekit replay --dataset F --strategy S [--budget-evals N | --budget-time T] [--repeats R]
//                [--seed S] [--json] [--export-kt FILE] [--export-t4 FILE]: runs a strategy
//                against a recorded space (the exports hold the first run's evaluations).
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/commands.hpp"
#include "commands/export_flags.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"
#include "tunekit/methodology.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit::cli {
namespace {

using Json = nlohmann::ordered_json;

struct ReplayOptions {
  std::string dataset;
  std::string strategy = "bandit";
  std::size_t budget_evals = 0;
  double budget_time = 0;
  std::size_t repeats = 1;
  std::uint64_t seed = 1;
  bool json = false;
  ExportFlags exports;
};

void run_replay(const ReplayOptions& o) {
  if (o.repeats == 0) throw UsageError("--repeats must be at least 1");
  const Recording recording = Recording::load(o.dataset);
  const StrategyRegistry registry = StrategyRegistry::builtin();
  Budget budget;
  if (o.budget_evals > 0) budget.evaluations = o.budget_evals;
  if (o.budget_time > 0) budget.seconds = o.budget_time;
  std::vector<double> values(recording.size());
  for (std::size_t i = 0; i < recording.size(); ++i)
    values[i] = recording.result(i).status == Status::ok ? recording.result(i).time_ms
                                                         : std::numeric_limits<double>::infinity();
  const MethodologyBaseline baseline = methodology_baseline(values, 1);
  Json runs = Json::array();
  double score_sum = 0;
  std::size_t scored = 0;
  std::optional<Recording> first_run;  // what the exports write
  for (std::size_t r = 0; r < o.repeats; ++r) {
    const std::uint64_t seed = o.seed + r;
    ReplayBackend backend(recording, seed);
    std::unique_ptr<Strategy> strategy = registry.make(o.strategy);
    const SearchResult result = search(
        recording.space(), *strategy,
        [&](std::size_t i) {
          const ReplayMeasurement m = backend.measure(i);
          return ObjectiveResult{m.status, m.recorded_ms, m.charged_ms / 1000.0, m.message};
        },
        budget, seed);
    if (r == 0 && o.exports.any()) first_run = recording_from_history(recording, result.history);
    const Evaluation* best = result.history.best();
    Json run;
    run["seed"] = seed;
    run["evaluations"] = result.history.size();
    run["failed"] =
        std::count_if(result.history.evaluations().begin(), result.history.evaluations().end(),
                      [](const Evaluation& e) { return !e.ok(); });
    run["simulated_seconds"] = result.clock_seconds;
    run["stop_reason"] = result.stop_reason;
    run["best_ms"] = best ? Json(best->value) : Json(nullptr);
    run["fraction_of_optimum"] = best ? Json(recording.optimum_ms() / best->value) : Json(0.0);
    run["best_config"] = best ? recording.space().config(best->index).text() : "";
    if (result.history.size() >= baseline.cutoff_budget) {
      const double score = methodology_score(
          best_so_far(result.history, baseline.cutoff_budget, baseline.worst), baseline);
      run["methodology_score"] = score;
      score_sum += score;
      ++scored;
    }
    if (!o.json) {
      std::cout << fmt::format(
          "seed {}: {} evaluations ({} failed), {:.1f} s simulated, stopped by {}; best {} ms "
          "({:.3f} of optimum) at {}\n",
          seed, result.history.size(), run["failed"].get<std::size_t>(), result.clock_seconds,
          result.stop_reason, best ? fmt::format("{:.6g}", best->value) : std::string("none"),
          run["fraction_of_optimum"].get<double>(), run["best_config"].get<std::string>());
    }
    runs.push_back(std::move(run));
  }
  if (first_run) o.exports.write(*first_run);
  if (o.json) {
    Json j;
    j["dataset"] = o.dataset;
    j["device"] = recording.device_name();
    j["kernel"] = recording.kernel_name();
    j["configurations"] = recording.size();
    j["optimum_ms"] = recording.optimum_ms();
    j["strategy"] = o.strategy;
    j["budget_evals"] = budget.evaluations ? Json(*budget.evaluations) : Json(nullptr);
    j["budget_seconds"] = budget.seconds ? Json(*budget.seconds) : Json(nullptr);
    j["methodology_budget"] = baseline.cutoff_budget;
    j["mean_methodology_score"] =
        scored ? Json(score_sum / static_cast<double>(scored)) : Json(nullptr);
    j["runs"] = std::move(runs);
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format(
      "{} ({}, {} configurations): optimum {:.6g} ms", o.dataset,
      recording.device_name().empty() ? "unnamed device" : recording.device_name(),
      recording.size(), recording.optimum_ms());
  if (scored)
    std::cout << fmt::format("; mean methodology score {:.3f} over {} runs (budget {} evaluations)",
                             score_sum / static_cast<double>(scored), scored,
                             baseline.cutoff_budget);
  std::cout << '\n';
}

}  // namespace

void register_replay(CLI::App& app) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Run a search strategy against a recorded space (Kernel Tuner cache or T4 file)");
  cmd->add_option("--dataset", o->dataset,
                  "Recorded space: Kernel Tuner cache (.json, .json.gz) or T4 file")
      ->required();
  cmd->add_option("--strategy", o->strategy,
                  "Strategy, with options: e.g. anneal:t0=2 (exhaustive, random, anneal, genetic, "
                  "ils, bayes, bandit)");
  auto* evals = cmd->add_option("--budget-evals", o->budget_evals, "Stop after N evaluations");
  auto* time =
      cmd->add_option("--budget-time", o->budget_time,
                      "Stop at T seconds of simulated time (compile + benchmark + verification)");
  evals->excludes(time);
  cmd->add_option("--repeats", o->repeats, "Independent runs (seeds S, S+1, ...)");
  cmd->add_option("--seed", o->seed, "Seed of the first run");
  cmd->add_flag("--json", o->json, "Write the result as JSON");
  o->exports.add_to(*cmd, "the first run's evaluations (their recorded results)");
  cmd->callback([o] { run_replay(*o); });
}

}  // namespace tunekit::cli
