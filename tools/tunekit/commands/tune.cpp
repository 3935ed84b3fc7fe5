// tunekit tune <op> --shape k=v,... [--threads N] [--mode M] [--json] [--statistic S]
//                   [--tie-band X] [--evict] [--quiet] [--store SPEC]
//                   [--strategy S[:opts]] [--schedule full|racing[:opts]] [--seed N]
//                   [--budget 90s] [--budget-evals N] [--build-threads N]
//                   [--timing isolated|queued]
//                   [--limit SECONDS] [--numerics CLASS] [--confirm-pairs N]
//                   [--finalists N] [--finalist-band X]
//                   [--isolation automatic|worker|in_process]
//                   [--save-artifact] [--artifact-dir D]
//                   [--model] [--profile F]
//                   [--backend cpu|opencl|cuda] [--device INDEX|NAME] [--arch sm_XX]
//                   [--wait-for-device 90s] [--share]
// tunekit tune --pending [op] [the search, store and backend flags above]
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands/backend.hpp"
#include "commands/bounds.hpp"
#include "commands/commands.hpp"
#include "commands/duration.hpp"
#include "commands/environment.hpp"
#include "commands/export_flags.hpp"
#include "commands/spread.hpp"
#include "commands/verbosity.hpp"
#include "progress_bar.hpp"
#include "tunekit/artifact.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/pending.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/terminal_text.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli {
namespace {

struct TuneCommand {
  std::string op;
  std::string shape;
  bool share = false;
  int threads = 0;
  std::string mode;
  std::string statistic;
  double tie_band = 0.02;
  bool json = false;
  std::string reporter = "console";
  std::string html;  // --html FILE: also write the report as an HTML page
  bool evict = false;
  std::string strategy;
  std::string schedule;
  std::uint64_t seed = 1;
  std::string budget;          // "90s", "2m", "1.5h" or seconds
  long long budget_evals = 0;  // signed: "-4" is refused, not wrapped
  int build_threads = 0;
  bool check_every_candidate = false;
  std::string timing;
  double limit = 0;
  std::string numerics;
  std::string isolation;  // automatic | worker | in_process
  int confirm_pairs = -1;
  int finalists = -1;  // -1: the library's default
  double finalist_band = -1;
  int rotate = 0;
  std::string placement_wait;  // empty: the library's default
  bool quiet = false;          // -q (the tool's flag): no progress bar
  Log log;                     // the tool's log (-v/-q, TUNEKIT_LOG)
  std::string store;           // empty: the environment's SQLite file
  std::string artifact_dir;    // empty: $TUNEKIT_ARTIFACT_DIR
  bool save_artifact = false;
  ExportFlags exports;  // --export-kt / --export-t4
  std::string backend;  // cpu (default) | opencl | cuda (commands/backend.hpp)
  std::string arch;     // --arch: what CUDA kernels are compiled for ("" the device's)
  std::string device;   // OpenCL device: index or name substring

  // Cost model.
  bool model = false;   // zero measurement: the cost model's pick (model_default)
  std::string profile;  // device profile for the cost model (default: the stored one)
  // Which options were given: flags win over TUNEKIT_MODE and the library's defaults.
  CLI::Option* tie_band_option = nullptr;

  // How long to wait for another process's search on the device ("90s"; empty: no wait).
  std::string wait_for_device;

  bool pending = false;  // --pending: tune the store's recorded misses (op: only that op's)
};

Statistic statistic_from_string(const std::string& text) {
  for (Statistic s : {Statistic::median, Statistic::min})
    if (to_string(s) == text) return s;
  throw UsageError(fmt::format("unknown --statistic '{}': use {} or {}", text,
                               to_string(Statistic::median), to_string(Statistic::min)));
}

// "m (integer, 1..65536), dtype (string, default f32)"
std::string key_fields_text(const OpBase& op) {
  std::string text;
  for (const KeyField& f : op.key_schema()) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{} ({}", f.name, to_string(f.type));
    if (f.type == Value::Type::integer) text += fmt::format(", {}..{}", f.min, f.max);
    if (f.default_value) text += fmt::format(", default {}", f.default_value->text());
    text += ")";
  }
  return text;
}

Key parse_shape(const OpBase& op, const CatalogEntry& entry, const std::string& shape) {
  try {
    return op.parse_shape(shape);
  } catch (const UsageError& e) {
    std::string help = fmt::format("bad --shape '{}' for {}: {}", shape, entry.name, e.what());
    if (!op.key_schema().empty()) help += fmt::format("\n  key fields: {}", key_fields_text(op));
    help += fmt::format("\n  example: tunekit tune {} --shape {}", entry.name, entry.example_shape);
    throw UsageError(help);
  }
}

// The artifact for a winner that was measured (now, or when it was stored / made into an
// artifact), with the evidence behind it: every candidate's reading. nullopt when the winner
// was not measured (mode off, nothing known in mode cached, a failed search...).
std::optional<Artifact> measured_artifact(const TuneReport& report, Tuner& tuner, const OpBase& op,
                                          const Key& key, const DeviceIdentity& device) {
  switch (report.source) {
    case Source::searched: {
      const CandidateReport* winner = report.find(report.winner);
      if (!winner || !winner->outcome.ok()) return std::nullopt;
      return make_artifact(op, key, device, report.winner_name, report.candidates,
                           search_record(report));
    }
    case Source::cache_replay: {
      Artifact a = make_artifact(op, key, device, report.winner_name);
      if (Store* store = tuner.store()) {
        if (auto stored = store->find(tuner.identity(op, key).digest().hex())) {
          a.evidence = std::move(stored->evidence);
          a.search = std::move(stored->search);
        }
      }
      return a;
    }
    case Source::artifact_replay: {
      // The artifact that answered: keep its evidence.
      Artifact a = make_artifact(op, key, device, report.winner_name);
      try {
        Artifact found = read_artifact(std::filesystem::path(tuner.options().persist.artifact_dir) /
                                       a.file_name());
        a.evidence = std::move(found.evidence);
        a.search = std::move(found.search);
      } catch (const UsageError&) {
      }
      return a;
    }
    default:
      return std::nullopt;
  }
}

void save_artifact(const TuneCommand& command, const std::string& dir, const TuneReport& report,
                   Tuner& tuner, const OpBase& op, const Key& key, const DeviceIdentity& device) {
  const std::optional<Artifact> artifact = measured_artifact(report, tuner, op, key, device);
  if (!artifact) {
    command.log.warn(fmt::format(
        "no artifact written: the winner {} was not measured (source {}{})", report.winner_name,
        to_string(report.source), report.reason.empty() ? "" : ": " + report.reason));
    return;
  }
  const std::string path = write_artifact(dir, *artifact);
  command.log.info(fmt::format("wrote artifact {}", path));
}

// The search flags (what is measured, how, for how long) onto `options`.
void apply_search_flags(const TuneCommand& command, TunerOptions& options) {
  if (!command.statistic.empty())
    options.decide.statistic = statistic_from_string(command.statistic);
  if (command.tie_band_option->count() > 0) options.decide.tie_band = command.tie_band;
  if (command.evict) options.measure.evict = true;
  if (command.strategy == "racing" || command.strategy.rfind("racing:", 0) == 0) {
    throw UsageError(fmt::format(
        "--strategy {}: racing is a schedule (how windows are shared), not a strategy (which "
        "points are measured): write --schedule {}",
        command.strategy, command.strategy));
  }
  if (!command.strategy.empty()) options.decide.strategy = command.strategy;
  if (!command.schedule.empty()) options.decide.schedule = command.schedule;
  options.decide.seed = command.seed;
  if (!command.budget.empty())
    options.decide.budget_seconds = parse_duration(command.budget, "--budget");
  options.decide.budget_evaluations = static_cast<std::size_t>(command.budget_evals);
  options.measure.build_threads = command.build_threads;
  options.measure.check_every_candidate = command.check_every_candidate;
  if (!command.timing.empty()) {
    if (command.timing != "isolated" && command.timing != "queued")
      throw UsageError(
          fmt::format("unknown --timing '{}': use isolated or queued", command.timing));
    options.measure.timing.mode =
        command.timing == "queued" ? TimingMode::queued : TimingMode::isolated;
  }
  options.decide.limit = command.limit;
  if (!command.numerics.empty()) {
    auto policy = numerics_from_string(command.numerics);
    if (!policy)
      throw UsageError(fmt::format(
          "unknown --numerics '{}': use bitwise, reassociates or approximate", command.numerics));
    options.decide.numerics_policy = *policy;
  }
  if (command.confirm_pairs >= 0) options.decide.confirm_pairs = command.confirm_pairs;
  if (command.finalists >= 0) options.decide.finalists = command.finalists;
  if (command.finalist_band >= 0) options.decide.finalist_band = command.finalist_band;
  if (!command.isolation.empty()) {
    auto mode = isolation_mode_from_string(command.isolation);
    if (!mode)
      throw UsageError(fmt::format("unknown --isolation '{}': use automatic, worker or in_process",
                                   command.isolation));
    options.measure.isolation.mode = *mode;
  }
  options.measure.rotate = command.rotate;
  if (const std::string& wait = command.placement_wait; !wait.empty())
    options.measure.placement.wait_seconds =
        wait == "0" || wait == "off" ? 0 : parse_duration(wait, "--placement-wait");
}

// The tuner's options: the environment's (TUNEKIT_MODE unless --mode), then the flags.
TunerOptions tuner_options(const TuneCommand& command) {
  TunerOptions options;
  if (command.mode.empty()) {
    options = TunerOptions::from_environment();
    use_own_program_for_workers(options);
  } else {
    // --mode wins: TUNEKIT_MODE is not even read (a bad value there must not stop us).
    options = options_ignoring_mode();
    try {
      options.decide.mode = mode_from_string(command.mode);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--mode: {}", e.what()));
    }
  }
  apply_search_flags(command, options);
  options.hooks.log = command.log;
  if (!command.store.empty()) options.persist.store = resolve_store_spec(command.store);
  if (!command.artifact_dir.empty()) options.persist.artifact_dir = command.artifact_dir;
  if (command.save_artifact && options.persist.artifact_dir.empty()) {
    throw UsageError(
        "--save-artifact needs a directory: pass --artifact-dir D or set TUNEKIT_ARTIFACT_DIR");
  }
  if (command.model && (command.save_artifact || command.exports.any())) {
    // --model measures nothing: there is no evidence to save or export.
    throw UsageError(
        "--model picks without measuring, so --save-artifact, --export-kt and --export-t4 "
        "have nothing to write: drop them, or drop --model to search");
  }
  if (!command.profile.empty()) options.model.profile = command.profile;
  if (command.share) options.decide.share.enabled = true;
  if (!command.wait_for_device.empty())
    options.persist.wait_for_device_seconds =
        parse_duration(command.wait_for_device, "--wait-for-device");
  return options;
}

BackendOpen backend_open(const TuneCommand& command, const TunerOptions& options) {
  return {command.device, command.arch, options.persist.store, command.log};
}

// tune --pending: the store's recorded misses of this device, tuned one after another. Exit
// status 1 when a record of this device could not be tuned (it is kept, and said why).
void run_tune_pending(const TuneCommand& command) {
  if (!command.html.empty())
    throw UsageError(
        "--html writes one run's page: drop it with --pending ('tunekit report "
        "--out FILE' writes the stored decisions as a page)");
  if (!command.shape.empty() || command.model || command.save_artifact || command.exports.any() ||
      !command.mode.empty()) {
    throw UsageError(
        "--pending tunes the keys recorded in the store, always searching: drop --shape, "
        "--mode, --model, --save-artifact, --export-kt and --export-t4");
  }
  TunerOptions options = tuner_options(command);
  cpu::ThreadPool pool(command.threads);
  BackendOps ops(command.backend, backend_open(command, options), pool);
  ProgressBar progress(std::cerr, ProgressBar::stderr_is_terminal(), ProgressBar::stderr_columns());
  if (!command.quiet) {
    options.hooks.on_progress = [&progress](const ProgressEvent& event) { progress.update(event); };
  }
  PendingTuning tuning;
  tuning.op = command.op;
  const std::unique_ptr<Reporter> reporter = make_reporter(command.json ? "json" : "console");
  tuning.on_outcome = [&](const PendingOutcome& o) {
    progress.finish();
    reporter->write(o, std::cout);
  };
  const auto outcomes = tune_pending(
      ops.device(), options, [&](std::string_view name) { return ops.find(name); }, tuning);
  reporter->write(outcomes, std::cout);
  const bool failed = std::any_of(outcomes.begin(), outcomes.end(),
                                  [](const PendingOutcome& o) { return o.failed(); });
  if (failed) throw CLI::RuntimeError(1);
}

// --html FILE: the run's page (docs/report.md), beside whatever went to stdout.
template <class R>
void write_html(const TuneCommand& command, const std::string& path, const R& report) {
  std::ostringstream page;
  make_reporter("html")->write(report, page);
  write_report_file(path, page.str());
  command.log.info(fmt::format("wrote {}", path));
}

void run_tune(const TuneCommand& command) {
  if (command.op.empty()) {
    throw UsageError(
        "say which op to tune ('tunekit ops' lists them), or --pending to tune the misses "
        "recorded in the store");
  }
  // Everything the user typed is checked before any thread, buffer or measurement exists.
  const CatalogEntry entry = find_backend_op(find_backend(command.backend), command.op);
  TunerOptions options = tuner_options(command);
  const std::unique_ptr<Reporter> reporter =
      make_reporter(command.json ? "json" : command.reporter);

  cpu::ThreadPool pool(command.threads);
  // --backend opencl|cuda opens the device (and checks --device) before anything is measured.
  const Backend backend =
      open_backend(command.backend, backend_open(command, options), entry.name, pool);
  const std::unique_ptr<OpBase>& op = backend.op;
  std::string shape = command.shape;
  if (shape.empty()) {
    shape = entry.example_shape;
    command.log.info(
        fmt::format("no --shape given; using {}'s example shape {}", entry.name, shape));
  }
  const Key key = parse_shape(*op, entry, shape);

  ProgressBar progress(std::cerr, ProgressBar::stderr_is_terminal(), ProgressBar::stderr_columns());
  if (!command.quiet) {
    options.hooks.on_progress = [&progress](const ProgressEvent& event) { progress.update(event); };
  }
  Device& device = backend.device();
  Tuner tuner(device, options);
  if (command.model) {
    // Zero measurement: the cost model ranks, nothing runs, nothing is stored.
    ModelReport model;
    tuner.model_default(*op, key, &model);
    reporter->write(model, std::cout);
    if (!command.html.empty()) write_html(command, command.html, model);
    return;
  }
  TuneReport report;
  tuner.select(*op, key, &report);
  progress.finish();
  reporter->write(report, std::cout);
  if (!command.html.empty()) write_html(command, command.html, report);
  if (!command.json && command.reporter == "console") {
    if (auto spread = spread_line(report)) std::cout << *spread << '\n';
  }
  std::cout.flush();
  if (command.save_artifact)
    save_artifact(command, options.persist.artifact_dir, report, tuner, *op, key,
                  device.identity());
  if (command.exports.any()) command.exports.write(recording_from_report(report, key), command.log);
}

// What the report is, and where it goes.
void add_output_flags(CLI::App& tune, TuneCommand& command) {
  tune.option_defaults()->group("Report");
  tune.add_flag("--json", command.json, "Write the report as JSON (same as --reporter json)");
  tune.add_option("--reporter", command.reporter, "Report format: console | json | html")
      ->capture_default_str();
  tune.add_option("--html", command.html,
                  "Also write the report as a self-contained HTML page to FILE (docs/report.md)");
}

// Which points are measured, under which schedule and budget.
void add_search_flags(CLI::App& tune, TuneCommand& command) {
  tune.option_defaults()->group("Search");
  tune.add_option(
      "--strategy", command.strategy,
      "Which points to measure: auto (default: every point up to 256, the cost model's best "
      "first where there is a profile, else surrogate capped at 200), exhaustive, random, anneal, "
      "genetic, ils, bayes, surrogate, bandit, model; options after ':' (e.g. genetic:pop=20, "
      "model:top=4,floor=1.5); see 'tunekit strategies'");
  tune.add_option("--schedule", command.schedule,
                  "How windows are shared: full (default) | racing[:round=4,z=1.96,...]");
  tune.add_option("--seed", command.seed, "The strategy's seed (recorded in the report)")
      ->transform(unsigned_in(0, UINT64_MAX))
      ->capture_default_str();
  tune.add_option("--budget", command.budget,
                  "Wall-clock budget of the search: 90s, 2m, 1.5h or seconds (the default is "
                  "always measured; a cut search is stored as budget_cut)");
  tune.add_option("--budget-evals", command.budget_evals,
                  "Measure at most N points beyond the default")
      ->transform(integer_in(1, std::int64_t{1} << 40));
  tune.add_option("--build-threads", command.build_threads,
                  "Threads of the compile pass (0: one per hardware thread)")
      ->transform(integer_in(0, 1024));
}

// How each candidate is run and timed.
void add_measurement_flags(CLI::App& tune, TuneCommand& command) {
  tune.option_defaults()->group("Measurement");
  tune.add_option("--threads,-t", command.threads, "Worker threads (0: one per core)")
      ->transform(integer_in(0, 4096))
      ->capture_default_str();
  tune.add_flag("--evict", command.evict, "Flush the last-level cache before each sample");
  tune.add_flag("--check-every-candidate", command.check_every_candidate,
                "Checked calls after every candidate's first window, not only after those "
                "that could win (an audit: every wrong candidate named)");
  tune.add_option("--timing", command.timing,
                  "isolated (one launch per sample) | queued (calibrated batches)");
  tune.add_option("--rotate", command.rotate,
                  "Input copies cycled while timing (0: what the op declares, 1: none)")
      ->transform(integer_in(0, 64));
  tune.add_option("--placement-wait", command.placement_wait,
                  "The most a search waits, in all, for the host to run the CPUs near each "
                  "other again when it finds them apart, e.g. 2s or 500ms (default: off); see "
                  "docs/guide.md \"Where the host runs the CPUs\"");
  tune.add_option("--isolation", command.isolation,
                  "Where trials run: automatic (a worker process on the CPU, in process on "
                  "OpenCL/CUDA) | worker (on OpenCL/CUDA: a spawned process with its own "
                  "device context) | in_process");
}

// How the measurements decide.
void add_decision_flags(CLI::App& tune, TuneCommand& command) {
  tune.option_defaults()->group("Decision");
  tune.add_option("--statistic", command.statistic,
                  "Ranking statistic: median | min (default: median)");
  command.tie_band_option =
      tune.add_option("--tie-band", command.tie_band,
                      "Candidates within this fraction of the best are tied (default 0.02)")
          ->check(real_in(0.0, 1.0));
  tune.add_option("--limit", command.limit,
                  "Racing: stop once the leader is surely under this many seconds per call")
      ->check(real_in(0, 3600));
  tune.add_option("--numerics", command.numerics,
                  "Most permissive numerics class admitted: bitwise | reassociates | approximate");
  tune.add_option("--confirm-pairs", command.confirm_pairs,
                  "A B B A pairs confirming a non-default winner (0: off; default 16)")
      ->transform(integer_in(0, 10000));
  tune.add_option("--finalists", command.finalists,
                  "The best readings timed again side by side once the search ends, the "
                  "decision taken on those (0: off; default 8)")
      ->transform(integer_in(0, 1000));
  tune.add_option("--finalist-band", command.finalist_band,
                  "Finalists are within this fraction of the best reading (default 0.25)")
      ->check(real_in(0, 10));
}

// Which backend and device.
void add_device_flags(CLI::App& tune, TuneCommand& command) {
  tune.option_defaults()->group("Device");
  tune.add_option("--backend", command.backend,
                  "cpu (host kernels, default) | opencl (runtime-compiled OpenCL kernels) | "
                  "cuda (NVRTC-compiled CUDA kernels)");
  tune.add_option("--device", command.device,
                  "OpenCL or CUDA device: an index or a part of its name (see 'tunekit "
                  "devices'; default: the first)");
  tune.add_option("--arch", command.arch,
                  "CUDA: the architecture NVRTC compiles for, e.g. sm_80 (default: the "
                  "device's own)");
}

// Where choices are kept and served from, and when tuning runs.
void add_choice_flags(CLI::App& tune, TuneCommand& command) {
  tune.option_defaults()->group("Stored choices");
  tune.add_option("--mode", command.mode,
                  "off | cached | tune | force (default: $TUNEKIT_MODE, else tune)");
  tune.add_option("--store", command.store,
                  "Where choices are kept: sqlite:PATH, or none for memory only (default: "
                  "choices.db under $TUNEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tunekit, else "
                  "~/.cache/tunekit)");
  tune.add_option("--artifact-dir", command.artifact_dir,
                  "Artifacts are looked up (and --save-artifact writes them) here (default: "
                  "$TUNEKIT_ARTIFACT_DIR)");
  tune.add_flag("--save-artifact", command.save_artifact,
                "Write the measured winner as a deployable artifact and print its path on "
                "stderr");
  tune.add_flag("--model", command.model,
                "Zero measurement: pick with the cost model (needs a device profile: 'tunekit "
                "calibrate'); the default stands when the model cannot decide");
  tune.add_option("--profile", command.profile,
                  "Device profile for the cost model (default: this device's stored profile)");
  tune.add_option("--wait-for-device", command.wait_for_device,
                  "While another process searches on this device, wait up to this long (90s, "
                  "2m) for it, then serve what it stored (default: serve the default at once)");
  tune.add_flag("--share", command.share,
                "Share the search with the 'tunekit worker's of a server store "
                "(postgresql://...) of the same hardware identity; the best points they "
                "measured are measured again here before the pick (docs/fleet.md; "
                "TUNEKIT_SHARE=1)");
  tune.add_flag("--pending", command.pending,
                "Tune every miss recorded in the store (mode cached; see 'tunekit cache ls "
                "--pending') for this device, with the ops' input generators; exits 1 when one "
                "could not be tuned (kept in the store)");
}

}  // namespace

void register_tune(CLI::App& app) {
  auto command = std::make_shared<TuneCommand>();
  CLI::App* tune = app.add_subcommand(
      "tune", "Validate and time every candidate of a built-in op for one key; report the winner");
  tune->add_option("op", command->op,
                   "The op to tune (see 'tunekit ops'); with --pending, only this op's misses");
  tune->add_option("--shape,-s", command->shape,
                   "The key, e.g. m=256,n=256,k=256 (default: the op's example shape)");
  add_output_flags(*tune, *command);
  add_search_flags(*tune, *command);
  add_measurement_flags(*tune, *command);
  add_decision_flags(*tune, *command);
  add_device_flags(*tune, *command);
  add_choice_flags(*tune, *command);
  command->exports.add_to(*tune, "the measured candidates");
  tune->callback([command, tune] {
    command->log = tool_log(*tune);
    command->quiet = !shows_progress(*tune);
    command->pending ? run_tune_pending(*command) : run_tune(*command);
  });
}

}  // namespace tunekit::cli
