// tunekit replay --dataset F [--strategy S] [--schedule S] [--budget-evals N | --budget T]
//                [--repeats R] [--seed S] [--json] [--export-kt FILE] [--export-t4 FILE]
//                [--share [--store postgresql://...]]: the
//                live tuner's search on a recorded space (a ReplayDevice); the exports hold the
//                first run's evaluations.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/bounds.hpp"
#include "commands/commands.hpp"
#include "commands/duration.hpp"
#include "commands/export_flags.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"
#include "tunekit/methodology.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/replay_search.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit::cli {
namespace {

using Json = nlohmann::ordered_json;

struct ReplayOptions {
  std::string dataset;
  std::string strategy = std::string(kDefaultStrategy);
  std::string schedule = "full";
  long long budget_evals = 0;  // signed: "-4" is refused, not wrapped
  std::string budget_time;
  std::size_t repeats = 1;
  std::uint64_t seed = 1;
  bool json = false;
  bool share = false;
  std::string store;
  double pace = 0;
  ExportFlags exports;
  Log log;  // the tool's log (-v/-q, TUNEKIT_LOG)
};

void run_replay(const ReplayOptions& o) {
  if (o.repeats == 0) throw UsageError("--repeats must be at least 1");
  // Everything the user typed is checked before the dataset is read.
  ReplaySearchOptions search;
  search.strategy = o.strategy;
  search.schedule = o.schedule;
  search.budget_evaluations = static_cast<std::size_t>(o.budget_evals);
  if (!o.budget_time.empty()) search.budget_seconds = parse_duration(o.budget_time, "--budget");
  search.log = o.log;
  search.pace = o.pace;
  if (!o.store.empty() && !o.share)
    throw UsageError("--store is where a shared replay queues its points: add --share");
  if (o.share) {
    search.share = true;
    search.store = resolve_store_spec(o.store);
  }
  const Recording recording = Recording::load(o.dataset);
  Budget budget;  // as reported
  if (o.budget_evals > 0) budget.evaluations = static_cast<std::size_t>(o.budget_evals);
  if (search.budget_seconds > 0) budget.seconds = search.budget_seconds;
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
    search.seed = seed;
    const ReplayRun replay = replay_search(recording, search);
    struct {
      const History& history;
      double clock_seconds;
      const std::string& stop_reason;
    } result{replay.history, replay.simulated_seconds, replay.report.stop_reason};
    if (r == 0 && o.exports.any()) first_run = recording_from_history(recording, result.history);
    Json run;
    run["seed"] = seed;
    run["evaluations"] = result.history.size();
    run["failed"] =
        std::count_if(result.history.evaluations().begin(), result.history.evaluations().end(),
                      // A hopeless point was measured (cut early for being slow): not a failure.
                      [](const Evaluation& e) { return !e.ok() && e.status != Status::hopeless; });
    run["simulated_seconds"] = result.clock_seconds;
    run["stop_reason"] = result.stop_reason;
    run["best_ms"] = replay.pick ? Json(replay.pick_ms) : Json(nullptr);
    run["fraction_of_optimum"] =
        replay.pick ? Json(recording.optimum_ms() / replay.pick_ms) : Json(0.0);
    run["best_config"] = replay.pick ? recording.space().config(*replay.pick).text() : "";
    run["winner"] = replay.report.winner_name;
    Json trace = Json::array();
    for (const Evaluation& e : result.history.evaluations()) trace.push_back(e.index);
    run["trace"] = std::move(trace);
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
          result.stop_reason,
          replay.pick ? fmt::format("{:.6g}", replay.pick_ms) : std::string("none"),
          run["fraction_of_optimum"].get<double>(), run["best_config"].get<std::string>());
    }
    runs.push_back(std::move(run));
  }
  if (first_run) o.exports.write(*first_run, o.log);
  if (o.json) {
    Json j;
    j["dataset"] = o.dataset;
    j["device"] = recording.device_name();
    j["kernel"] = recording.kernel_name();
    j["configurations"] = recording.size();
    j["optimum_ms"] = recording.optimum_ms();
    j["strategy"] = o.strategy;
    j["schedule"] = o.schedule;
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
  cmd->add_option(
      "--strategy", o->strategy,
      "Which points to measure, as in 'tune': auto (default), exhaustive, random, anneal, "
      "genetic, ils, bayes, bandit, model; options after ':' (e.g. anneal:t0=2)");
  cmd->add_option("--schedule", o->schedule, "How windows are shared: full | racing[:opts]")
      ->capture_default_str();
  auto* evals = cmd->add_option("--budget-evals", o->budget_evals,
                                "Measure at most N points beyond the default")
                    ->transform(integer_in(1, std::int64_t{1} << 40));
  auto* time = cmd->add_option(
      "--budget,--budget-time", o->budget_time,
      "Simulated-time budget (the recorded compile and verification times and the readings of "
      "every timing window), e.g. 600s or 10m");
  evals->excludes(time);
  // Bounded: 4294967295 runs would never end (and "-1" would wrap to that).
  cmd->add_option("--repeats", o->repeats, "Independent runs (seeds S, S+1, ...)")
      ->transform(unsigned_in(1, 10000));
  cmd->add_option("--seed", o->seed, "Seed of the first run")
      ->transform(unsigned_in(0, UINT64_MAX));
  cmd->add_flag("--json", o->json, "Write the result as JSON");
  cmd->add_flag("--share", o->share,
                "Share each search with the 'tunekit worker --dataset' processes of a server "
                "store (docs/fleet.md); the replayed choice is stored there");
  cmd->add_option("--store", o->store,
                  "With --share: the server store (postgresql://...; default $TUNEKIT_STORE)");
  cmd->add_option("--pace", o->pace,
                  "Real seconds slept per recorded second of each build and validation "
                  "(default 0: as fast as the file reads)")
      ->check(real_in(0, 1000));
  o->exports.add_to(*cmd, "the first run's evaluations (their recorded results)");
  cmd->callback([o, cmd] {
    o->log = tool_log(*cmd);
    run_replay(*o);
  });
}

}  // namespace tunekit::cli
