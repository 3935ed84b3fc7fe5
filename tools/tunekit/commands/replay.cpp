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

// What the user typed, checked before the dataset is read.
ReplaySearchOptions search_options(const ReplayOptions& o) {
  if (o.repeats == 0) throw UsageError("--repeats must be at least 1");
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
  return search;
}

// One run's record: what it evaluated, in order, what it picked, and its methodology score
// when it reached the baseline's budget.
Json run_record(const Recording& recording, const ReplayRun& replay, std::uint64_t seed,
                const MethodologyBaseline& baseline) {
  const History& history = replay.history;
  Json run;
  run["seed"] = seed;
  run["evaluations"] = history.size();
  run["failed"] =
      std::count_if(history.evaluations().begin(), history.evaluations().end(),
                    // A hopeless point was measured (cut early for being slow): not a failure.
                    [](const Evaluation& e) { return !e.ok() && e.status != Status::hopeless; });
  run["simulated_seconds"] = replay.simulated_seconds;
  run["stop_reason"] = replay.report.stop_reason;
  run["best_ms"] = replay.pick ? Json(replay.pick_ms) : Json(nullptr);
  run["fraction_of_optimum"] =
      replay.pick ? Json(recording.optimum_ms() / replay.pick_ms) : Json(0.0);
  run["best_config"] = replay.pick ? recording.space().config(*replay.pick).text() : "";
  run["winner"] = replay.report.winner_name;
  Json trace = Json::array();
  for (const Evaluation& e : history.evaluations()) trace.push_back(e.index);
  run["trace"] = std::move(trace);
  if (history.size() >= baseline.cutoff_budget)
    run["methodology_score"] =
        methodology_score(best_so_far(history, baseline.cutoff_budget, baseline.worst), baseline);
  return run;
}

void print_run(const Json& run) {
  const bool picked = !run["best_ms"].is_null();
  std::cout << fmt::format(
      "seed {}: {} evaluations ({} failed), {:.1f} s simulated, stopped by {}; best {} ms "
      "({:.3f} of optimum) at {}\n",
      run["seed"].get<std::uint64_t>(), run["evaluations"].get<std::size_t>(),
      run["failed"].get<std::size_t>(), run["simulated_seconds"].get<double>(),
      run["stop_reason"].get<std::string>(),
      picked ? fmt::format("{:.6g}", run["best_ms"].get<double>()) : std::string("none"),
      run["fraction_of_optimum"].get<double>(), run["best_config"].get<std::string>());
}

void print_summary(const ReplayOptions& o, const ReplaySearchOptions& search,
                   const Recording& recording, const Json& runs,
                   const MethodologyBaseline& baseline) {
  double score_sum = 0;
  std::size_t scored = 0;
  for (const Json& run : runs)
    if (run.contains("methodology_score"))
      score_sum += run["methodology_score"].get<double>(), ++scored;
  const Json mean = scored ? Json(score_sum / static_cast<double>(scored)) : Json(nullptr);
  if (o.json) {
    Json j;
    j["dataset"] = o.dataset;
    j["device"] = recording.device_name();
    j["kernel"] = recording.kernel_name();
    j["configurations"] = recording.size();
    j["optimum_ms"] = recording.optimum_ms();
    j["strategy"] = o.strategy;
    j["schedule"] = o.schedule;
    j["budget_evals"] =
        search.budget_evaluations > 0 ? Json(search.budget_evaluations) : Json(nullptr);
    j["budget_seconds"] = search.budget_seconds > 0 ? Json(search.budget_seconds) : Json(nullptr);
    j["methodology_budget"] = baseline.cutoff_budget;
    j["mean_methodology_score"] = mean;
    j["runs"] = runs;
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format(
      "{} ({}, {} configurations): optimum {:.6g} ms", o.dataset,
      recording.device_name().empty() ? "unnamed device" : recording.device_name(),
      recording.size(), recording.optimum_ms());
  if (scored)
    std::cout << fmt::format("; mean methodology score {:.3f} over {} runs (budget {} evaluations)",
                             mean.get<double>(), scored, baseline.cutoff_budget);
  std::cout << '\n';
}

void run_replay(const ReplayOptions& o) {
  ReplaySearchOptions search = search_options(o);
  const Recording recording = Recording::load(o.dataset);
  std::vector<double> values(recording.size());
  for (std::size_t i = 0; i < recording.size(); ++i)
    values[i] = recording.result(i).status == Status::ok ? recording.result(i).time_ms
                                                         : std::numeric_limits<double>::infinity();
  const MethodologyBaseline baseline = methodology_baseline(values, 1);
  Json runs = Json::array();
  std::optional<Recording> first_run;  // what the exports write
  for (std::size_t r = 0; r < o.repeats; ++r) {
    search.seed = o.seed + r;
    const ReplayRun replay = replay_search(recording, search);
    if (r == 0 && o.exports.any()) first_run = recording_from_history(recording, replay.history);
    runs.push_back(run_record(recording, replay, search.seed, baseline));
    if (!o.json) print_run(runs.back());
  }
  if (first_run) o.exports.write(*first_run, o.log);
  print_summary(o, search, recording, runs, baseline);
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
