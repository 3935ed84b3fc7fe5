// tunekit._tunekit._Tuner: a Tuner on this machine's CPU, with options from the environment
// (TUNEKIT_MODE, TUNEKIT_CACHE_DIR, ...) overridden by keyword arguments as the CLI's flags
// override them. Every call that may search releases the GIL; the Python callables of a
// Python op take it back for the time of each call.
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "bindings.hpp"
#include "key_convert.hpp"
#include "python_op.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/tuner.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

template <class T>
constexpr const char* expected() {
  if constexpr (std::is_same_v<T, std::string>) return "a str";
  if constexpr (std::is_same_v<T, bool>) return "True or False";
  if constexpr (std::is_floating_point_v<T>) return "a number";
  if constexpr (std::is_unsigned_v<T>) return "an int >= 0";
  return "an int";
}

// Removes the option `name` from `options`: its value, or nullopt when absent or None.
template <class T>
std::optional<T> take(nb::dict& options, const char* name) {
  if (!options.contains(name)) return std::nullopt;
  nb::object value = options[name];
  nb::del(options[name]);
  if (value.is_none()) return std::nullopt;
  T out;
  if (!nb::try_cast(value, out)) {
    throw UsageError(std::string("Tuner(") + name + "=" + nb::cast<std::string>(nb::repr(value)) +
                     "): give " + expected<T>());
  }
  return out;
}

// As `tunekit tune --store` reads it: "" is $TUNEKIT_STORE, else the environment's SQLite
// file; "sqlite" is that file; others as given.
std::string store_spec(const std::string& given) {
  const auto getenv = [](const char* name) -> const char* { return std::getenv(name); };
  if (given == "sqlite") return "sqlite:" + default_store_path(getenv);
  if (given.empty()) return store_spec_from_environment(getenv);
  return given;
}

Statistic statistic_from(const std::string& text) {
  for (Statistic s : {Statistic::median, Statistic::min})
    if (to_string(s) == text) return s;
  throw UsageError("unknown statistic '" + text + "': use median or min");
}

void apply_decide(nb::dict& o, DecideOptions& d) {
  if (auto v = take<std::string>(o, "strategy")) d.strategy = *v;
  if (auto v = take<std::string>(o, "schedule")) d.schedule = *v;
  if (auto v = take<std::uint64_t>(o, "seed")) d.seed = *v;
  if (auto v = take<double>(o, "budget")) d.budget_seconds = *v;
  if (auto v = take<std::size_t>(o, "budget_evals")) d.budget_evaluations = *v;
  if (auto v = take<std::string>(o, "statistic")) d.statistic = statistic_from(*v);
  if (auto v = take<double>(o, "tie_band")) d.tie_band = *v;
  if (auto v = take<int>(o, "confirm_pairs")) d.confirm_pairs = *v;
  if (auto v = take<int>(o, "finalists")) d.finalists = *v;
  if (auto v = take<double>(o, "finalist_band")) d.finalist_band = *v;
  if (auto v = take<std::string>(o, "numerics")) {
    auto policy = numerics_from_string(*v);
    if (!policy)
      throw UsageError("unknown numerics '" + *v + "': use bitwise, reassociates or approximate");
    d.numerics_policy = *policy;
  }
}

void apply_measure(nb::dict& o, MeasureOptions& m) {
  if (auto v = take<std::string>(o, "isolation")) {
    auto mode = isolation_mode_from_string(*v);
    if (!mode)
      throw UsageError("unknown isolation '" + *v + "': use automatic, worker or in_process");
    m.isolation.mode = *mode;
  }
  if (auto v = take<std::string>(o, "timing")) {
    if (*v != "isolated" && *v != "queued")
      throw UsageError("unknown timing '" + *v + "': use isolated or queued");
    m.timing.mode = *v == "queued" ? TimingMode::queued : TimingMode::isolated;
  }
  if (auto v = take<bool>(o, "evict")) m.evict = *v;
  if (auto v = take<int>(o, "rotate")) m.rotate = *v;
  if (auto v = take<bool>(o, "check_every_candidate")) m.check_every_candidate = *v;
}

// The environment's options (TUNEKIT_MODE unread when `mode` is given), then the keywords.
TunerOptions tuner_options(nb::dict o) {
  const std::optional<std::string> mode = take<std::string>(o, "mode");
  TunerOptions options = mode ? TunerOptions::from_environment([](const char* name) -> const char* {
    return std::string_view(name) == "TUNEKIT_MODE" ? nullptr : std::getenv(name);
  })
                              : TunerOptions::from_environment();
  if (mode) options.decide.mode = mode_from_string(*mode);
  apply_decide(o, options.decide);
  apply_measure(o, options.measure);
  if (auto v = take<std::string>(o, "store")) options.persist.store = store_spec(*v);
  if (auto v = take<std::string>(o, "artifact_dir")) options.persist.artifact_dir = *v;
  if (auto v = take<double>(o, "wait_for_device")) options.persist.wait_for_device_seconds = *v;
  if (auto v = take<std::string>(o, "profile")) options.model.profile = *v;
  if (o.size() != 0) {
    throw UsageError("Tuner: unknown option " +
                     nb::cast<std::string>(nb::repr((*o.begin()).first)) +
                     " (see help(tunekit.Tuner))");
  }
  return options;
}

class PyTuner {
 public:
  PyTuner(int threads, nb::dict options)
      : pool_(threads), tuner_(device_, tuner_options(std::move(options))) {}

  // `tunekit tune`: the answer for the key as the mode allows (a search on a miss in mode
  // tune, the store's choice on a hit), with the report, as the JSON reporter writes it.
  std::string tune(nb::handle op, nb::handle shape) {
    Key key;
    const OpBase& resolved = resolve(op, shape, key);
    TuneReport report;
    {
      nb::gil_scoped_release released;
      tuner_.select(resolved, key, &report);
    }
    return to_json(report, -1);
  }

  // Tuner::tune: searches now, whatever the mode and the table say.
  std::string search(nb::handle op, nb::handle shape) {
    Key key;
    const OpBase& resolved = resolve(op, shape, key);
    nb::gil_scoped_release released;
    return to_json(tuner_.tune(resolved, key), -1);
  }

  nb::object run(const PythonOp& op, nb::tuple args) {
    PyCall call;
    call.args = GilRef(std::move(args));
    call.live = true;
    {
      nb::gil_scoped_release released;
      tuner_.run(op.op(), call);
    }
    return call.returned.get();
  }

  std::string explain(nb::handle op, nb::handle shape) {
    Key key;
    const OpBase& resolved = resolve(op, shape, key);
    ModelReport report;
    {
      nb::gil_scoped_release released;
      report = tuner_.explain(resolved, key);
    }
    return to_json(report, -1);
  }

  // The choice this tuner serves for the key from memory: (candidate, index, source), or None.
  nb::object decision(nb::handle op, nb::handle shape) {
    Key key;
    const OpBase& resolved = resolve(op, shape, key);
    const std::optional<Choice> choice = tuner_.settled(resolved, key);
    if (!choice) return nb::none();
    return nb::make_tuple(resolved.candidate(choice->index).name, choice->index,
                          std::string(to_string(choice->source)));
  }

  std::string store() {
    Store* s = tuner_.store();
    return s ? s->describe() : "none";
  }
  std::string mode() const { return std::string(to_string(tuner_.options().decide.mode)); }

 private:
  const OpBase& resolve(nb::handle op, nb::handle shape, Key& key) {
    if (nb::isinstance<PythonOp>(op)) {
      const PythonOp& python = nb::cast<const PythonOp&>(op);
      key = python_op_key(shape);
      return python.op();
    }
    if (!nb::isinstance<nb::str>(op))
      throw UsageError("op: a built-in op's name (see tunekit.ops()) or a tunekit.Op");
    const CatalogEntry& entry = find_builtin_op(nb::cast<std::string>(op));
    std::lock_guard lock(builtins_mutex_);
    auto it = builtins_.find(entry.name);
    if (it == builtins_.end()) it = builtins_.emplace(entry.name, entry.make(pool_)).first;
    key = builtin_key(*it->second, shape, entry.example_shape);
    return *it->second;
  }

  cpu::ThreadPool pool_;  // the built-in ops' threads
  cpu::CpuDevice device_;
  Tuner tuner_;
  std::mutex builtins_mutex_;
  std::map<std::string, std::unique_ptr<OpBase>, std::less<>> builtins_;
};

}  // namespace

void register_tuner(nb::module_& m) {
  nb::class_<PyTuner>(m, "_Tuner")
      .def(nb::init<int, nb::dict>(), nb::arg("threads"), nb::arg("options"))
      .def("tune", &PyTuner::tune, nb::arg("op"), nb::arg("shape").none())
      .def("search", &PyTuner::search, nb::arg("op"), nb::arg("shape").none())
      .def("run", &PyTuner::run, nb::arg("op"), nb::arg("args"))
      .def("explain", &PyTuner::explain, nb::arg("op"), nb::arg("shape").none())
      .def("decision", &PyTuner::decision, nb::arg("op"), nb::arg("shape").none())
      .def_prop_ro("store", &PyTuner::store)
      .def_prop_ro("mode", &PyTuner::mode);
}

}  // namespace tunekit::python
