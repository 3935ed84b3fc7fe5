// The module-level calls behind `tunekit replay`, `space`, `calibrate`, `ops` and `cache ls`,
// each the library call the CLI command makes; results are JSON texts the Python side loads
// (the JSON reporters' fields where a reporter exists).
#include <cstdlib>
#include <sstream>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "key_convert.hpp"
#include "tunekit/calibration.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cost_model.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/replay_search.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/space.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

const char* read_env(const char* name) {
  return std::getenv(name);
}

// The environment's options without TUNEKIT_MODE: these calls never use the mode.
TunerOptions options_ignoring_mode() {
  return TunerOptions::from_environment([](const char* name) -> const char* {
    return std::string_view(name) == "TUNEKIT_MODE" ? nullptr : std::getenv(name);
  });
}

// One replay run (`tunekit replay`): the tuner's report and the history's summary.
nb::dict replay(const std::string& dataset, const std::string& strategy,
                const std::string& schedule, std::size_t budget_evals, double budget,
                std::uint64_t seed) {
  ReplaySearchOptions search;
  search.strategy = strategy;
  search.schedule = schedule;
  search.budget_evaluations = budget_evals;
  search.budget_seconds = budget;
  search.seed = seed;
  std::optional<Recording> recording;
  std::optional<ReplayRun> run;
  {
    nb::gil_scoped_release released;
    recording.emplace(Recording::load(dataset));
    run.emplace(replay_search(*recording, search));
  }
  nb::dict d;
  d["dataset"] = dataset;
  d["device"] = recording->device_name();
  d["kernel"] = recording->kernel_name();
  d["configurations"] = recording->size();
  d["optimum_ms"] = recording->optimum_ms();
  d["evaluations"] = run->history.size();
  d["simulated_seconds"] = run->simulated_seconds;
  d["stop_reason"] = run->report.stop_reason;
  d["best_ms"] = run->pick ? nb::object(nb::float_(run->pick_ms)) : nb::none();
  d["fraction_of_optimum"] = run->pick ? recording->optimum_ms() / run->pick_ms : 0.0;
  d["best_config"] =
      run->pick ? nb::object(config_to_dict(recording->space().config(*run->pick))) : nb::none();
  d["winner"] = run->report.winner_name;
  d["report"] = to_json(run->report, -1);
  return d;
}

// `tunekit space FILE --list N`: the space's sizes and its first `limit` valid configurations.
nb::dict space(const std::string& file, std::size_t limit) {
  const Space s = read_t1_space(file);
  std::optional<Enumeration> e;
  {
    nb::gil_scoped_release released;
    e.emplace(s.enumerate());
  }
  nb::list configs;
  for (std::size_t i = 0; i < std::min(limit, e->size()); ++i)
    configs.append(config_to_dict(e->config(i)));
  nb::list parameters;
  for (const auto& p : s.parameters()) parameters.append(p.name);
  nb::dict d;
  d["file"] = file;
  d["parameters"] = parameters;
  d["constraints"] = s.constraints().size();
  d["cartesian"] = s.cartesian_size();
  d["valid"] = e->size();
  d["configs"] = configs;
  return d;
}

// `tunekit calibrate`: measures this host's envelope and writes the device profile (to `out`,
// else where the tuner looks for it); returns the profile's JSON and the path.
nb::tuple calibrate(bool quick, int threads, const std::string& out) {
  const TunerOptions env = options_ignoring_mode();
  std::string path, json;
  {
    nb::gil_scoped_release released;
    cpu::ThreadPool pool(threads);
    cpu::CpuDevice device;
    auto probe = cpu::make_calibration_probe(pool, quick ? 0.004 : 0.03);
    CalibrationOptions options;
    options.quick = quick;
    const Calibration c = tunekit::calibrate(*probe, options);
    const DeviceProfile profile = make_profile(device.identity(), c, quick);
    path = out.empty() ? profile_path(env.model.profile_dir, profile.device_digest) : out;
    path = write_profile(path, profile);
    json = profile.to_json();
  }
  return nb::make_tuple(json, path);
}

nb::list ops() {
  nb::list list;
  for (const CatalogEntry& e : builtin_ops()) {
    nb::dict d;
    d["name"] = e.name;
    d["description"] = e.description;
    d["example_shape"] = e.example_shape;
    list.append(d);
  }
  return list;
}

// `tunekit cache ls [--op OP] [--pending] --json`: "[]" when the store does not exist yet; an
// unusable store is a UsageError saying what it is and that it was left as it is.
std::string cache_ls(const std::string& given, const std::string& op, bool pending) {
  nb::gil_scoped_release released;  // a locked store is waited for (TUNEKIT_STORE_WAIT_MS)
  std::string spec = given;
  if (spec == "sqlite") spec = "sqlite:" + default_store_path(read_env);
  if (spec.empty()) spec = store_spec_from_environment(read_env);  // as `tunekit cache ls`
  const std::string shown = shown_store_spec(spec);                // messages never show a password
  if (spec == "none" || spec == "memory")
    throw UsageError("cache.ls: '" + spec + "' is no persistent store: give sqlite:PATH or None");
  StoreOptions options = store_options_from_environment(read_env);
  options.create = false;
  StoreOpening opened = open_store_checked(spec, options, {});
  if (opened.state == StoreState::missing) return "[]";
  if (!opened.store)
    throw UsageError("cannot list the store " + shown + ": it is " + opened.why +
                     "; it is left as it is (pass store='sqlite:PATH' to list another)");
  std::ostringstream text;
  const auto reporter = make_reporter("json");
  if (pending)
    reporter->write(PendingMissList{shown, op, opened.store->pending(op)}, text);
  else
    reporter->write(StoredChoiceList{shown, op, {}, opened.store->list(op)}, text);
  return text.str();
}

}  // namespace

void register_tools(nb::module_& m) {
  m.def("replay", &replay, nb::arg("dataset"), nb::arg("strategy"), nb::arg("schedule"),
        nb::arg("budget_evals"), nb::arg("budget"), nb::arg("seed"));
  m.def("space", &space, nb::arg("file"), nb::arg("limit"));
  m.def("calibrate", &calibrate, nb::arg("quick"), nb::arg("threads"), nb::arg("out"));
  m.def("ops", &ops);
  m.def("cache_ls", &cache_ls, nb::arg("store"), nb::arg("op"), nb::arg("pending"));
}

}  // namespace tunekit::python
