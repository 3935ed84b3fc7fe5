// Recordings out: from a tuner report or a search history, to Kernel Tuner cache and T4
// results files (docs/formats.md).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/safe_file.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"
#include "tunekit/value_json.hpp"

namespace tunekit {
namespace {

using OrderedJson = nlohmann::ordered_json;

// Sorts results into the order Enumeration::from_points gives their points; the order they
// come in (the order the run evaluated them) becomes the recording's order(), which the
// writers follow.
Recording assemble(std::vector<Parameter> parameters, const std::vector<std::uint32_t>& flat,
                   std::vector<RecordedResult> results, std::string device, std::string kernel,
                   std::vector<Value> problem_size) {
  const std::size_t width = parameters.size();
  Enumeration space = Enumeration::from_points(std::move(parameters), flat);
  if (space.size() != results.size())
    throw UsageError("cannot export: two results have the same configuration");
  std::vector<RecordedResult> ordered(results.size());
  std::vector<std::size_t> order(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    order[i] = *space.index_of_point({flat.data() + i * width, width});
    ordered[order[i]] = std::move(results[i]);
  }
  return Recording::from_results(std::move(space), std::move(ordered), std::move(device),
                                 std::move(kernel), std::move(problem_size), std::move(order));
}

// Whether a candidate was evaluated: measured, or failed in a way the files can record.
bool evaluated(Status s) {
  switch (s) {
    case Status::ok:
    case Status::rejected:
    case Status::compile_failed:
    case Status::launch_failed:
    case Status::out_of_memory:
    case Status::validation_failed:
    case Status::timed_out:
      return true;
    default:
      return false;
  }
}

// How Python's str() writes a value: Kernel Tuner joins them with ',' into its cache keys.
std::string python_text(const Value& v) {
  switch (v.type()) {
    case Value::Type::integer:
      return std::to_string(v.as_int());
    case Value::Type::real: {
      std::string t = fmt::format("{}", v.as_real());
      if (t.find_first_of(".en") == std::string::npos) t += ".0";
      return t;
    }
    case Value::Type::string:
      return v.as_string();
    case Value::Type::boolean:
      return v.as_bool() ? "True" : "False";
  }
  return {};
}

const char* kt_marker(const RecordedResult& r) {
  for (const char* m : {"CompilationFailedConfig", "RuntimeFailedConfig", "InvalidConfig"})
    if (r.failure == m) return m;
  switch (r.status) {
    case Status::compile_failed:
      return "CompilationFailedConfig";
    case Status::rejected:
      return "InvalidConfig";
    default:
      return "RuntimeFailedConfig";  // Kernel Tuner has no marker for the others
  }
}

const char* t4_invalidity(Status s) {
  switch (s) {
    case Status::ok:
      return "correct";
    case Status::compile_failed:
      return "compile";
    case Status::rejected:
      return "constraints";
    case Status::validation_failed:
      return "correctness";
    case Status::timed_out:
      return "timeout";
    default:
      return "runtime";
  }
}

OrderedJson values_json(const std::vector<Value>& values) {  // T4
  OrderedJson j = OrderedJson::array();
  for (const Value& v : values) j.push_back(value_json(v));
  return j;
}

}  // namespace

Recording recording_from_report(const TuneReport& report, const Key& key) {
  std::vector<const CandidateReport*> done;
  for (const CandidateReport& c : report.candidates)
    if (evaluated(c.outcome.status)) done.push_back(&c);
  if (done.empty())
    throw UsageError("nothing to export: no candidate of " + report.op + " " + report.key +
                     " was measured or failed here" +
                     (report.reason.empty() ? std::string() : " (" + report.reason + ")"));
  // The candidates' own parameters when they share them and tell candidates apart.
  std::vector<Config> configs;
  bool by_config = true;
  std::set<std::string> seen;
  for (const CandidateReport* c : done) {
    try {
      configs.push_back(Config::parse(c->config));
    } catch (const UsageError&) {
      by_config = false;
      break;
    }
    const auto names = [](const Config& k) {
      std::vector<std::string> n;
      for (const Field& f : k.fields()) n.push_back(f.name);
      return n;
    };
    if (configs.back().empty() || names(configs.back()) != names(configs.front()) ||
        !seen.insert(c->config).second)
      by_config = false;
  }
  if (!by_config) {
    configs.clear();
    for (const CandidateReport* c : done) configs.push_back(Config{{"candidate", c->name}});
  }
  std::vector<Parameter> parameters;
  for (const Field& f : configs.front().fields()) parameters.push_back({f.name, {}});
  std::vector<std::uint32_t> flat;
  for (const Config& config : configs) {
    for (std::size_t p = 0; p < parameters.size(); ++p) {
      const Value& v = config.fields()[p].value;
      auto& values = parameters[p].values;
      auto it = std::find(values.begin(), values.end(), v);
      if (it == values.end()) it = values.insert(values.end(), v);
      flat.push_back(static_cast<std::uint32_t>(it - values.begin()));
    }
  }
  std::vector<RecordedResult> results;
  for (const CandidateReport* c : done) {
    RecordedResult r;
    r.status = c->outcome.status;
    if (!c->outcome.ok()) r.failure = c->outcome.message;
    if (c->outcome.ok()) {
      r.time_ms = c->score * 1000.0;
      if (c->timing)
        for (double s : c->timing->samples) r.times_ms.push_back(s * 1000.0);
    }
    if (c->timing) r.benchmark_ms = c->timing->wall_seconds * 1000.0;
    r.compile_ms = c->compile_seconds * 1000.0;
    results.push_back(std::move(r));
  }
  std::vector<Value> problem_size;
  for (const Field& f : key.fields()) problem_size.push_back(f.value);
  return assemble(std::move(parameters), flat, std::move(results), report.device, report.op,
                  std::move(problem_size));
}

Recording recording_from_history(const Recording& source, const History& history) {
  if (history.size() == 0) throw UsageError("nothing to export: the search evaluated nothing");
  const Enumeration& space = source.space();
  std::vector<std::uint32_t> flat;
  std::vector<RecordedResult> results;
  for (const Evaluation& e : history.evaluations()) {
    const auto p = space.point(e.index);
    flat.insert(flat.end(), p.begin(), p.end());
    results.push_back(source.result(e.index));
  }
  return assemble(space.parameters(), flat, std::move(results), source.device_name(),
                  source.kernel_name(), source.problem_size());
}

std::string kernel_tuner_cache_json(const Recording& recording) {
  const Enumeration& space = recording.space();
  OrderedJson doc;
  doc["device_name"] = recording.device_name();
  doc["kernel_name"] = recording.kernel_name();
  doc["problem_size"] = values_json(recording.problem_size());
  doc["tune_params_keys"] = OrderedJson::array();
  doc["tune_params"] = OrderedJson::object();
  for (const Parameter& p : space.parameters()) {
    doc["tune_params_keys"].push_back(p.name);
    doc["tune_params"][p.name] = values_json(p.values);
  }
  doc["objective"] = "time";
  // The entries in the recording's order (an export's: the order the run evaluated them), as
  // Kernel Tuner writes its cache. ordered_json's own insertion looks each key up linearly,
  // which is quadratic over tens of thousands of entries: a hash set refuses repeats and the
  // entries are appended to the object's underlying vector.
  OrderedJson cache = OrderedJson::object();
  auto& entries =
      static_cast<OrderedJson::object_t::Container&>(cache.get_ref<OrderedJson::object_t&>());
  entries.reserve(space.size());
  std::unordered_set<std::string> keys;
  keys.reserve(space.size());
  for (const std::size_t i : recording.order()) {
    const Config config = space.config(i);
    const RecordedResult& r = recording.result(i);
    std::string key;
    OrderedJson entry;
    for (const Field& f : config.fields()) {
      key += (key.empty() ? "" : ",") + python_text(f.value);
      entry[f.name] = value_json(f.value);
    }
    if (r.status == Status::ok) {
      entry["time"] = r.time_ms;
      entry["times"] = r.times_ms;
    } else {
      entry["time"] = kt_marker(r);
    }
    entry["compile_time"] = r.compile_ms;
    entry["verification_time"] = r.verification_ms;
    entry["benchmark_time"] = r.benchmark_ms;
    entry["strategy_time"] = 0;
    entry["framework_time"] = 0;
    // Kernel Tuner's keys cannot tell "a,b" from two values "a" and "b": refuse rather than
    // let one configuration overwrite another.
    if (!keys.insert(key).second)
      throw UsageError("cannot write a Kernel Tuner cache file: configuration " + config.text() +
                       " and another both have the cache key '" + key +
                       "' (a value contains ','); export a T4 file instead");
    entries.emplace_back(std::move(key), std::move(entry));
  }
  doc["cache"] = std::move(cache);
  return doc.dump(1) + "\n";
}

std::string t4_results_json(const Recording& recording) {
  const Enumeration& space = recording.space();
  OrderedJson doc;
  doc["schema_version"] = "1.0.0";
  // Not in the T4 schema (which allows extra properties): tunekit reads them back.
  doc["device_name"] = recording.device_name();
  doc["kernel_name"] = recording.kernel_name();
  doc["problem_size"] = values_json(recording.problem_size());
  OrderedJson results = OrderedJson::array();
  for (const std::size_t i : recording.order()) {  // an export's: the evaluation order
    const RecordedResult& r = recording.result(i);
    OrderedJson entry;
    entry["configuration"] = OrderedJson::object();
    const Config config = space.config(i);
    for (const Field& f : config.fields()) entry["configuration"][f.name] = value_json(f.value);
    OrderedJson times;
    // The schema names it compilation_time; Kernel Tuner's writer says compilation.
    times["compilation_time"] = r.compile_ms;
    times["compilation"] = r.compile_ms;
    times["benchmark"] = r.benchmark_ms;
    times["framework"] = 0;
    times["search_algorithm"] = 0;
    times["validation"] = r.verification_ms;
    times["runtimes"] = r.status == Status::ok ? OrderedJson(r.times_ms) : OrderedJson::array();
    entry["times"] = std::move(times);
    entry["invalidity"] = t4_invalidity(r.status);
    entry["correctness"] = r.status == Status::validation_failed ? 0 : 1;
    OrderedJson m;
    m["name"] = "time";
    m["value"] = r.status == Status::ok ? OrderedJson(r.time_ms) : OrderedJson(kt_marker(r));
    m["unit"] = "ms";
    entry["measurements"] = OrderedJson::array({m});
    entry["objectives"] = OrderedJson::array({"time"});
    results.push_back(std::move(entry));
  }
  doc["results"] = std::move(results);
  return doc.dump(1) + "\n";
}

void write_kernel_tuner_cache(const std::filesystem::path& file, const Recording& recording) {
  detail::write_file_atomically(file, kernel_tuner_cache_json(recording), "Kernel Tuner cache");
}

void write_t4_results(const std::filesystem::path& file, const Recording& recording) {
  detail::write_file_atomically(file, t4_results_json(recording), "T4 results file");
}

}  // namespace tunekit
