// Loads recorded spaces: Kernel Tuner cache files (.json / .json.gz) and T4 results files.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string_view>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/safe_file.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/replay.hpp"

namespace tunekit {

namespace {

using Json = nlohmann::json;

// Caps on a recording (docs/formats.md): the largest shared dataset inflates to 17 MB; 128 MiB
// leaves room for spaces eight times larger while a parse stays within a few GB of memory.
constexpr std::size_t kRecordingMaxFileBytes = std::size_t{128} << 20;
constexpr std::size_t kRecordingMaxTextBytes = std::size_t{128} << 20;

// The file's bytes, gunzipped when they start with the gzip magic; regular files only, capped.
std::string read_file(const std::filesystem::path& file) {
  std::string bytes = detail::read_outside_file(file, kRecordingMaxFileBytes, "recording");
  if (!detail::looks_gzipped(bytes)) return bytes;
  return detail::gunzip_bounded(bytes, kRecordingMaxTextBytes, "recording '" + file.string() + "'");
}

Value json_value(const Json& j) {
  if (j.is_boolean()) return Value(j.get<bool>());
  // An unsigned value past INT64_MAX would silently wrap to a negative one.
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > std::uint64_t{INT64_MAX})
    throw UsageError("parameter value " + j.dump() + " does not fit in a 64-bit integer");
  if (j.is_number_integer()) return Value(j.get<std::int64_t>());
  if (j.is_number()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  throw UsageError("unsupported parameter value " + j.dump());
}

double number_or_zero(const Json& entry, const char* name) {
  const auto it = entry.find(name);
  return it != entry.end() && it->is_number() ? it->get<double>() : 0.0;
}

// A recorded time must be a duration: a negative one would rank first.
double checked_ms(double ms, const std::string& where) {
  if (!(ms >= 0) || ms > 1e15)
    throw UsageError(where + ": time " + std::to_string(ms) + " ms is not a duration");
  return ms;
}

Status kt_failure_status(const std::string& marker) {
  if (marker == "CompilationFailedConfig") return Status::compile_failed;
  if (marker == "RuntimeFailedConfig") return Status::launch_failed;
  if (marker == "InvalidConfig") return Status::rejected;
  return Status::launch_failed;
}

// Maps each parameter value of a config to its index in the parameter's list.
struct PointBuilder {
  std::vector<Parameter> parameters;
  std::vector<std::uint32_t> flat;
  bool grow = false;  // T4: add unseen values to the lists

  void add(const Json& config, const std::string& where) {
    for (Parameter& p : parameters) {
      const auto it = config.find(p.name);
      if (it == config.end())
        throw UsageError(where + ": a configuration lacks parameter '" + p.name + "'");
      const Value v = json_value(*it);
      auto pos = std::find(p.values.begin(), p.values.end(), v);
      if (pos == p.values.end()) {
        if (!grow)
          throw UsageError(where + ": value " + v.text() + " of '" + p.name +
                           "' is not in tune_params");
        p.values.push_back(v);
        pos = p.values.end() - 1;
      }
      flat.push_back(static_cast<std::uint32_t>(pos - p.values.begin()));
    }
  }
};

}  // namespace

Recording Recording::from_results(Enumeration space, std::vector<RecordedResult> results,
                                  std::string device_name, std::string kernel_name,
                                  std::vector<Value> problem_size, std::vector<std::size_t> order) {
  if (results.size() != space.size())
    throw UsageError("a recording needs one result per configuration of its space");
  if (order.empty()) {
    order.resize(results.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
  }
  std::vector<bool> listed(results.size(), false);
  for (const std::size_t i : order)
    if (i >= listed.size() || listed[i])
      throw UsageError("a recording's order must list every configuration once");
    else
      listed[i] = true;
  if (order.size() != results.size())
    throw UsageError("a recording's order must list every configuration once");
  Recording r;
  r.order_ = std::move(order);
  r.space_ = std::move(space);
  r.results_ = std::move(results);
  r.device_name_ = std::move(device_name);
  r.kernel_name_ = std::move(kernel_name);
  r.problem_size_ = std::move(problem_size);
  return r;
}

namespace {

// Sorts results into the enumeration's order (from_points sorts the points); the order they
// came in (the file's) becomes the recording's order().
Recording assemble(PointBuilder& builder, std::vector<RecordedResult> results,
                   const std::string& where) {
  const std::size_t width = builder.parameters.size();
  std::vector<std::uint32_t> flat = builder.flat;
  Enumeration space = Enumeration::from_points(builder.parameters, std::move(flat));
  if (space.size() != results.size())
    throw UsageError(where + ": the same configuration is recorded twice");
  std::vector<RecordedResult> ordered(results.size());
  std::vector<std::size_t> order(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::span<const std::uint32_t> p(builder.flat.data() + i * width, width);
    order[i] = *space.index_of_point(p);
    ordered[order[i]] = std::move(results[i]);
  }
  return Recording::from_results(std::move(space), std::move(ordered), {}, {}, {},
                                 std::move(order));
}

// `cache_keys`: the cache's keys in the file's order (nlohmann::json sorts object keys), so that
// the recording keeps the order the run evaluated its configurations in.
Recording load_kernel_tuner_cache(const Json& doc, const std::vector<std::string>& cache_keys,
                                  const std::string& where) {
  PointBuilder builder;
  const Json& keys = doc.at("tune_params_keys");
  const Json& params = doc.at("tune_params");
  for (const Json& k : keys) {
    Parameter p{k.get<std::string>(), {}};
    for (const Json& v : params.at(p.name)) p.values.push_back(json_value(v));
    builder.parameters.push_back(std::move(p));
  }
  std::vector<RecordedResult> results;
  const Json& cache = doc.at("cache");
  if (!cache.is_object()) throw UsageError(where + ": \"cache\" is not an object");
  results.reserve(cache.size());
  // The file's order; the sorted one where the keys seen do not name the cache's entries
  // exactly (a second "cache" object, a key given twice: the last value is the one kept).
  std::vector<Json::const_iterator> entries;
  entries.reserve(cache.size());
  std::unordered_set<std::string_view> seen;
  for (const std::string& key : cache_keys) {
    const auto it = cache.find(key);
    if (it != cache.end() && seen.insert(key).second) entries.push_back(it);
  }
  if (entries.size() != cache.size()) {
    entries.clear();
    for (auto it = cache.begin(); it != cache.end(); ++it) entries.push_back(it);
  }
  for (const Json::const_iterator& it : entries) {
    const std::string& key = it.key();
    const Json& entry = *it;
    builder.add(entry, where + " (entry " + key + ")");
    RecordedResult r;
    const Json& time = entry.at("time");
    if (time.is_string()) {
      r.failure = time.get<std::string>();
      r.status = kt_failure_status(r.failure);
    } else {
      r.time_ms = checked_ms(time.get<double>(), where + " (entry " + key + ")");
      if (const auto t = entry.find("times"); t != entry.end() && t->is_array())
        for (const Json& s : *t)
          r.times_ms.push_back(checked_ms(s.get<double>(), where + " (entry " + key + ")"));
    }
    r.compile_ms = number_or_zero(entry, "compile_time");
    r.benchmark_ms = number_or_zero(entry, "benchmark_time");
    r.verification_ms = number_or_zero(entry, "verification_time");
    results.push_back(std::move(r));
  }
  return assemble(builder, std::move(results), where);
}

// T4 "invalidity" (results-schema.json: timeout, compile, runtime, correctness, constraints;
// Kernel Tuner writes "correct" for a valid configuration).
Status t4_status(const std::string& invalidity) {
  if (invalidity == "correct") return Status::ok;
  if (invalidity == "compile") return Status::compile_failed;
  if (invalidity == "runtime") return Status::launch_failed;
  if (invalidity == "constraints") return Status::rejected;
  if (invalidity == "correctness") return Status::validation_failed;
  if (invalidity == "timeout") return Status::timed_out;
  return Status::launch_failed;
}

// The schema names the compile time "compilation_time"; Kernel Tuner writes "compilation".
double t4_compile_ms(const Json& times) {
  const double ms = number_or_zero(times, "compilation_time");
  return ms != 0 ? ms : number_or_zero(times, "compilation");
}

// `order`: the parameter names in the file's order (nlohmann::json sorts object keys).
Recording load_t4(const Json& doc, const std::vector<std::string>& order,
                  const std::string& where) {
  const Json& list = doc.at("results");
  if (!list.is_array()) throw UsageError(where + ": \"results\" is not a list");
  PointBuilder builder;
  builder.grow = true;
  for (const std::string& name : order) builder.parameters.push_back({name, {}});
  std::vector<RecordedResult> results;
  for (const Json& entry : list) {
    const Json& config = entry.at("configuration");
    if (!config.is_object() || config.size() != builder.parameters.size())
      throw UsageError(where + ": every result must configure the same parameters");
    builder.add(config, where);
    RecordedResult r;
    const std::string invalidity = entry.value("invalidity", std::string("correct"));
    r.status = t4_status(invalidity);
    if (r.status != Status::ok) r.failure = invalidity;
    const Json times = entry.value("times", Json::object());
    if (r.status == Status::ok) {
      if (const auto t = times.find("runtimes"); t != times.end() && t->is_array())
        for (const Json& s : *t)
          if (s.is_number()) r.times_ms.push_back(checked_ms(s.get<double>(), where));
      // The objective is the measurement named by objectives[0] (Kernel Tuner: "time").
      std::string objective = "time";
      if (const auto o = entry.find("objectives");
          o != entry.end() && o->is_array() && !o->empty() && o->front().is_string())
        objective = o->front().get<std::string>();
      bool found = false;
      for (const Json& m : entry.value("measurements", Json::array()))
        if (m.is_object() && m.value("name", std::string()) == objective && m.contains("value") &&
            m["value"].is_number()) {
          r.time_ms = checked_ms(m["value"].get<double>(), where);
          found = true;
        }
      if (!found && !r.times_ms.empty()) {
        for (double s : r.times_ms) r.time_ms += s;
        r.time_ms /= static_cast<double>(r.times_ms.size());
        found = true;
      }
      if (!found)
        throw UsageError(where + ": a valid result records neither the objective '" + objective +
                         "' nor runtimes");
    }
    r.compile_ms = t4_compile_ms(times);
    r.benchmark_ms = number_or_zero(times, "benchmark");
    if (r.benchmark_ms == 0)
      for (double s : r.times_ms) r.benchmark_ms += s;
    r.verification_ms = number_or_zero(times, "validation");
    results.push_back(std::move(r));
  }
  if (results.empty()) throw UsageError(where + ": the T4 file records no results");
  return assemble(builder, std::move(results), where);
}

// The first result's parameter names as the file orders them (a T4 file has no key list). A
// second parse, keeping key order, of a file that is small next to a Kernel Tuner cache.
std::vector<std::string> t4_parameter_order(const std::string& text) {
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text);
  std::vector<std::string> order;
  const auto& list = doc.at("results");
  if (list.is_array() && !list.empty())
    for (const auto& [name, value] : list.front().at("configuration").items())
      order.push_back(name);
  return order;
}

// The keys of the top-level "cache" object in the file's order (nlohmann::json sorts them), by
// a second, SAX pass over the text that builds nothing. (nlohmann's parser callback would do it
// in the first pass, but it rescans an object for discarded members after each of its members:
// quadratic, 20 s instead of 0.1 s over the 17956 entries of gemm_clblast/RTX_Titan.)
std::vector<std::string> cache_key_order(const std::string& text) {
  struct Keys final : nlohmann::json_sax<Json> {
    std::vector<std::string> keys;
    int depth = 0;
    bool in_cache = false;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return ++depth, true; }
    bool end_object() override { return --depth, true; }
    bool start_array(std::size_t) override { return ++depth, true; }
    bool end_array() override { return --depth, true; }
    bool key(string_t& name) override {
      if (depth == 1) {
        in_cache = name == "cache";
      } else if (depth == 2 && in_cache) {
        keys.push_back(name);
      }
      return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
      return false;
    }
  } sax;
  Json::sax_parse(text, &sax);
  return std::move(sax.keys);
}

// Kernel Tuner's problem_size: an integer, or a list of them (strings are kept as strings).
std::vector<Value> problem_size_of(const Json& doc) {
  std::vector<Value> out;
  const auto it = doc.find("problem_size");
  if (it == doc.end() || it->is_null()) return out;
  if (it->is_array()) {
    for (const Json& v : *it) out.push_back(json_value(v));
  } else {
    out.push_back(json_value(*it));
  }
  return out;
}

}  // namespace

Recording Recording::load(const std::filesystem::path& file) {
  const std::string where = file.string();
  const std::string text = read_file(file);
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    throw UsageError(where + " is not valid JSON: " + e.what());
  }
  try {
    Recording r;
    if (doc.contains("cache") && doc.contains("tune_params")) {
      r = load_kernel_tuner_cache(doc, cache_key_order(text), where);
      r.format_ = Format::kernel_tuner_cache;
      r.device_name_ = doc.value("device_name", std::string());
      r.kernel_name_ = doc.value("kernel_name", std::string());
      r.problem_size_ = problem_size_of(doc);
    } else if (doc.contains("results")) {
      r = load_t4(doc, t4_parameter_order(text), where);
      r.format_ = Format::t4;
      // Not in the T4 schema: tunekit's exports add them (other files have none).
      r.device_name_ = doc.value("device_name", std::string());
      r.kernel_name_ = doc.value("kernel_name", std::string());
      r.problem_size_ = problem_size_of(doc);
    } else {
      throw UsageError(where +
                       ": neither a Kernel Tuner cache file (cache, tune_params) nor a T4 "
                       "results file (results)");
    }
    r.source_ = where;
    return r;
  } catch (const Json::exception& e) {
    throw UsageError(where + ": " + e.what());
  } catch (const UsageError& e) {
    // Every message names the file (some checks do not know it).
    if (std::string_view(e.what()).rfind(where, 0) == 0) throw;
    throw UsageError(where + ": " + e.what());
  }
}

std::size_t Recording::valid_count() const {
  return static_cast<std::size_t>(
      std::count_if(results_.begin(), results_.end(),
                    [](const RecordedResult& r) { return r.status == Status::ok; }));
}

std::optional<std::size_t> Recording::best() const {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < results_.size(); ++i)
    if (results_[i].status == Status::ok &&
        (!best || results_[i].time_ms < results_[*best].time_ms))
      best = i;
  return best;
}

double Recording::optimum_ms() const {
  const std::optional<std::size_t> b = best();
  if (!b) throw UsageError("the recording " + source_ + " has no successful configuration");
  return results_[*b].time_ms;
}

ReplayBackend::ReplayBackend(const Recording& recording, std::uint64_t seed)
    : recording_(&recording), rng_(seed) {}

ReplayMeasurement ReplayBackend::measure(std::size_t index) {
  const RecordedResult& r = recording_->result(index);
  ReplayMeasurement m;
  m.status = r.status;
  m.charged_ms = r.charge_ms();
  clock_ms_ += m.charged_ms;
  if (r.status != Status::ok) {
    m.message = "recorded as " + r.failure;
    return m;
  }
  m.recorded_ms = r.time_ms;
  if (r.times_ms.empty()) {
    m.time_ms = r.time_ms;
  } else {
    std::uniform_int_distribution<std::size_t> pick(0, r.times_ms.size() - 1);
    m.time_ms = r.times_ms[pick(rng_)];
  }
  return m;
}

ReplayMeasurement ReplayBackend::measure(const Config& config) {
  const std::optional<std::size_t> index = recording_->space().index_of(config);
  if (!index) return {Status::rejected, "configuration " + config.text() + " was not recorded"};
  return measure(*index);
}

}  // namespace tunekit
