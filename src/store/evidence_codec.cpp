#include "store/evidence_codec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>

#include "tunekit/candidate.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/value.hpp"

namespace tunekit::detail {
namespace {

using Json = CodecJson;

std::string str(std::string_view text) {
  return std::string(text);
}

// A field of an object, or `fallback` when it is missing, null or of another type: entries
// written before a field existed (or by hand) still read.
template <class T>
T get(const Json& j, const char* name, T fallback) {
  if (!j.is_object() || !j.contains(name)) return fallback;
  const Json& v = j.at(name);
  try {
    return v.is_null() ? fallback : v.get<T>();
  } catch (const Json::exception&) {
    return fallback;
  }
}

Json parse(std::string_view text) {
  return Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

// A typed view of a config's text ({"mc": 64, "order": "ikj"}); null when it does not parse.
// Written for readers of the JSON only: decoding reads the config text.
Json params_json(const std::string& config_text) {
  Json params = Json::object();
  try {
    const Config config = Config::parse(config_text);
    for (const Field& f : config.fields()) {
      switch (f.value.type()) {
        case Value::Type::integer:
          params[f.name] = f.value.as_int();
          break;
        case Value::Type::real:
          params[f.name] = f.value.as_real();
          break;
        case Value::Type::string:
          params[f.name] = f.value.as_string();
          break;
        case Value::Type::boolean:
          params[f.name] = f.value.as_bool();
          break;
      }
    }
  } catch (const std::exception&) {
    return nullptr;
  }
  return params;
}

Json budget_json(const BudgetReport& b) {
  Json j;
  j["seconds"] = b.seconds;
  j["evaluations"] = b.evaluations;
  j["cut"] = b.cut;
  j["stopped"] = b.stopped;
  j["reserve_seconds"] = b.reserve_seconds;
  j["not_started"] = b.not_started;
  return j;
}

BudgetReport budget_from_json(const Json& j) {
  BudgetReport b;
  b.seconds = get<double>(j, "seconds", 0);
  b.evaluations = get<std::size_t>(j, "evaluations", 0);
  b.cut = get<bool>(j, "cut", false);
  b.stopped = get<std::string>(j, "stopped", "");
  b.reserve_seconds = get<double>(j, "reserve_seconds", 0);
  b.not_started = get<std::size_t>(j, "not_started", 0);
  return b;
}

}  // namespace

Json timing_json(const TimingResult& t) {
  Json j;
  j["status"] = str(to_string(t.outcome.status));
  j["message"] = t.outcome.message;
  j["mode"] = str(to_string(t.mode));
  j["clock"] = t.clock;
  j["samples"] = t.samples;
  j["min"] = t.min;
  j["median"] = t.median;
  j["mean"] = t.mean;
  j["mad"] = t.mad;
  j["p10"] = t.p10;
  j["p90"] = t.p90;
  j["depth"] = t.depth;
  j["dispatches"] = t.dispatches;
  j["stalled_fraction"] = t.stalled_fraction;
  j["contended"] = t.contended;
  if (t.retaken > 0) j["retaken"] = t.retaken;
  if (t.waited > 0) j["waited"] = t.waited;
  if (t.clean > 0) j["clean"] = t.clean;
  j["wall_seconds"] = t.wall_seconds;
  return j;
}

TimingResult timing_from_json(const Json& j) {
  TimingResult t;
  t.outcome.status = status_from_string(get<std::string>(j, "status", "ok")).value_or(Status::ok);
  t.outcome.message = get<std::string>(j, "message", "");
  t.mode = get<std::string>(j, "mode", "isolated") == "queued" ? TimingMode::queued
                                                               : TimingMode::isolated;
  t.clock = get<std::string>(j, "clock", "");
  t.samples = get<std::vector<double>>(j, "samples", {});
  t.min = get<double>(j, "min", 0);
  t.median = get<double>(j, "median", 0);
  t.mean = get<double>(j, "mean", 0);
  t.mad = get<double>(j, "mad", 0);
  t.p10 = get<double>(j, "p10", 0);
  t.p90 = get<double>(j, "p90", 0);
  t.depth = get<int>(j, "depth", 1);
  t.dispatches = get<long long>(j, "dispatches", 0);
  t.stalled_fraction = get<double>(j, "stalled_fraction", 0);
  t.contended = get<bool>(j, "contended", false);
  t.retaken = std::max(0, get<int>(j, "retaken", 0));
  t.waited = std::max(0, get<int>(j, "waited", 0));
  t.clean = std::max(0, get<int>(j, "clean", 0));
  t.wall_seconds = get<double>(j, "wall_seconds", 0);
  return t;
}

Json candidate_json(const CandidateReport& c) {
  Json j;
  j["index"] = c.index;
  j["name"] = c.name;
  j["status"] = str(to_string(c.outcome.status));
  j["message"] = c.outcome.message;
  j["config"] = c.config;
  j["params"] = params_json(c.config);
  j["numerics"] = str(to_string(c.numerics));
  j["group"] = c.group;
  j["preference"] = c.preference;
  j["is_default"] = c.is_default;
  j["winner"] = c.winner;
  j["score"] = c.score;
  j["vs_default"] = c.vs_default;
  j["retries"] = c.retries;
  j["compile_seconds"] = c.compile_seconds;
  j["checked"] = c.checked;
  if (c.finalist) {
    j["finalist"] = true;
    j["search_score"] = c.search_score;
  }
  j["timing"] = c.timing ? timing_json(*c.timing) : Json(nullptr);
  return j;
}

CandidateReport candidate_from_json(const Json& c, std::size_t position) {
  CandidateReport r;
  r.index = get<std::size_t>(c, "index", position);
  r.name = get<std::string>(c, "name", "");
  r.config = get<std::string>(c, "config", "");
  r.numerics =
      numerics_from_string(get<std::string>(c, "numerics", "bitwise")).value_or(Numerics::bitwise);
  r.group = get<int>(c, "group", 0);
  r.preference = get<int>(c, "preference", 0);
  r.is_default = get<bool>(c, "is_default", false);
  r.winner = get<bool>(c, "winner", false);
  r.outcome.status =
      status_from_string(get<std::string>(c, "status", "skipped")).value_or(Status::skipped);
  r.outcome.message = get<std::string>(c, "message", "");
  r.retries = get<int>(c, "retries", 0);
  r.score = get<double>(c, "score", 0);
  r.vs_default = get<double>(c, "vs_default", 0);
  r.compile_seconds = get<double>(c, "compile_seconds", 0);  // absent before the compile pass
  // Absent before checks were kept to contenders: every candidate measured ok was checked.
  r.checked = get<bool>(c, "checked", r.outcome.ok());
  r.finalist = get<bool>(c, "finalist", false);
  r.search_score = get<double>(c, "search_score", 0);
  if (!(r.search_score >= 0) || !std::isfinite(r.search_score)) r.search_score = 0;  // damaged
  if (c.is_object() && c.contains("timing") && c["timing"].is_object())
    r.timing = timing_from_json(c["timing"]);
  return r;
}

namespace {

Json confidence_json(const DecisionConfidence& d) {
  Json j;
  j["runner_up"] = d.runner_up;
  j["advantage"] = d.advantage;
  j["advantage_low"] = d.advantage_low;
  j["paired_high"] = d.paired_high;
  if (!d.anchor.empty()) {
    j["anchor"] = d.anchor;
    j["anchor_paired_ratio"] = d.anchor_paired_ratio;
    j["anchor_paired_high"] = d.anchor_paired_high;
  }
  if (!d.tie_rival.empty()) {
    j["tie_rival"] = d.tie_rival;
    j["tie_paired_ratio"] = d.tie_paired_ratio;
  }
  j["verdict"] = d.verdict;
  if (d.waited_share > 0) j["waited_share"] = d.waited_share;
  return j;
}

DecisionConfidence confidence_from_json(const Json& j) {
  DecisionConfidence d;
  d.runner_up = get<std::string>(j, "runner_up", "");
  d.advantage = get<double>(j, "advantage", 0);
  d.advantage_low = get<double>(j, "advantage_low", 0);
  d.paired_high = get<double>(j, "paired_high", 0);
  d.anchor = get<std::string>(j, "anchor", "");
  d.anchor_paired_ratio = get<double>(j, "anchor_paired_ratio", 0);
  d.anchor_paired_high = get<double>(j, "anchor_paired_high", 0);
  if (!(d.anchor_paired_ratio >= 0)) d.anchor_paired_ratio = 0;  // damaged: unknown
  if (!(d.anchor_paired_high >= 0)) d.anchor_paired_high = 0;
  d.tie_rival = get<std::string>(j, "tie_rival", "");
  d.tie_paired_ratio = get<double>(j, "tie_paired_ratio", 0);
  if (!(d.tie_paired_ratio >= 0) || !std::isfinite(d.tie_paired_ratio)) d.tie_paired_ratio = 0;
  d.verdict = get<std::string>(j, "verdict", "");
  d.waited_share = get<double>(j, "waited_share", 0);
  if (!(d.waited_share >= 0 && d.waited_share <= 1)) d.waited_share = 0;  // damaged: unknown
  return d;
}

Json final_race_json(const FinalRace& f) {
  Json j;
  j["finalists"] = f.finalists;
  j["seconds"] = f.seconds;
  j["search_pick"] = f.search_pick;
  j["note"] = f.note;
  return j;
}

FinalRace final_race_from_json(const Json& j) {
  FinalRace f;
  f.finalists = get<std::size_t>(j, "finalists", 0);
  if (f.finalists > 100000) f.finalists = 0;  // damaged (a negative count read unsigned)
  f.seconds = get<double>(j, "seconds", 0);
  if (!(f.seconds >= 0) || !std::isfinite(f.seconds)) f.seconds = 0;  // damaged: unknown
  f.search_pick = get<std::string>(j, "search_pick", "");
  f.note = get<std::string>(j, "note", "");
  return f;
}

Json placement_json(const CpuPlacement& p) {
  Json j;
  j["before_ns"] = p.before_ns;
  j["after_ns"] = p.after_ns;
  if (p.lowest_ns > 0) j["lowest_ns"] = p.lowest_ns;
  if (p.waits > 0) {
    j["waits"] = p.waits;
    j["waited_seconds"] = p.waited_seconds;
  }
  if (p.ran_far > 0) j["ran_far"] = p.ran_far;
  return j;
}

CpuPlacement placement_from_json(const Json& j) {
  // Damaged (NaN, negative, beyond a second): unmeasured, both sides, so `changed` says nothing.
  auto round_trip = [&](const char* name) {
    const double ns = get<double>(j, name, 0);
    return ns > 0 && ns < 1e9 ? ns : 0.0;
  };
  CpuPlacement p{round_trip("before_ns"), round_trip("after_ns")};
  if (!p.measured()) return CpuPlacement{};
  p.lowest_ns = round_trip("lowest_ns");
  // Counts read as numbers first: a damaged one (NaN, negative, huge, fractional) is 0.
  auto count = [&](const char* name) {
    const double n = get<double>(j, name, 0);
    return n >= 0 && n <= 1e6 && n == std::floor(n) ? static_cast<int>(n) : 0;
  };
  p.waits = count("waits");
  p.ran_far = count("ran_far");
  const double waited = get<double>(j, "waited_seconds", 0);
  p.waited_seconds = waited >= 0 && waited < 1e7 ? waited : 0;  // NaN too: none
  return p;
}

}  // namespace

Json search_json(const SearchRecord& s) {
  Json j;
  j["strategy"] = s.strategy;
  j["schedule"] = s.schedule;
  j["seed"] = s.seed;
  j["space_size"] = s.space_size;
  // Absent: the op does not say (every point distinct), or an older entry.
  if (s.distinct_points > 0 && s.distinct_points < s.space_size)
    j["distinct_points"] = s.distinct_points;
  j["evaluated"] = s.evaluated;
  j["stop_reason"] = s.stop_reason;
  j["budget"] = budget_json(s.budget);
  if (!s.bucket.empty()) j["bucket"] = s.bucket;  // absent: an exact key (older entries too)
  if (s.confidence) j["confidence"] = confidence_json(*s.confidence);
  if (s.final_race.finalists > 0 || !s.final_race.note.empty())
    j["final_race"] = final_race_json(s.final_race);
  if (s.cpu_placement.measured()) j["cpu_placement"] = placement_json(s.cpu_placement);
  return j;
}

SearchRecord search_from_json(const Json& j) {
  SearchRecord s;
  s.strategy = get<std::string>(j, "strategy", "");
  s.schedule = get<std::string>(j, "schedule", "");
  s.seed = get<std::uint64_t>(j, "seed", 0);
  s.space_size = get<std::size_t>(j, "space_size", 0);
  s.distinct_points = get<std::size_t>(j, "distinct_points", 0);
  s.evaluated = get<std::size_t>(j, "evaluated", 0);
  s.stop_reason = get<std::string>(j, "stop_reason", "");
  if (j.is_object() && j.contains("budget")) s.budget = budget_from_json(j["budget"]);
  s.bucket = get<std::string>(j, "bucket", "");
  if (j.is_object() && j.contains("confidence") && j["confidence"].is_object())
    s.confidence = confidence_from_json(j["confidence"]);
  if (j.is_object() && j.contains("final_race") && j["final_race"].is_object())
    s.final_race = final_race_from_json(j["final_race"]);
  if (j.is_object() && j.contains("cpu_placement") && j["cpu_placement"].is_object())
    s.cpu_placement = placement_from_json(j["cpu_placement"]);
  return s;
}

Json evidence_json(const std::vector<CandidateReport>& candidates,
                   const std::optional<SearchRecord>& search, std::string_view scope) {
  Json list = Json::array();
  for (const CandidateReport& c : candidates) list.push_back(candidate_json(c));
  const bool kernel = scope == "kernel";
  if (!search && kernel) return list;
  Json j;
  if (!kernel) j["scope"] = std::string(scope);
  if (search) j["search"] = search_json(*search);
  j["candidates"] = std::move(list);
  return j;
}

std::string evidence_text(const std::vector<CandidateReport>& candidates,
                          const std::optional<SearchRecord>& search, std::string_view scope) {
  // Messages may carry compiler logs in any encoding: invalid UTF-8 becomes U+FFFD.
  return evidence_json(candidates, search, scope)
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

DecodedEvidence evidence_from_json(const Json& j) {
  DecodedEvidence out;
  const Json* list = &j;
  // {"search": ..., "candidates": [...]}, or the bare array older entries hold.
  if (j.is_object() && j.contains("candidates")) {
    list = &j["candidates"];
    if (j.contains("search") && j["search"].is_object()) out.search = search_from_json(j["search"]);
    if (j.contains("scope") && j["scope"].is_string() && !j["scope"].get<std::string>().empty())
      out.scope = j["scope"].get<std::string>();
  }
  if (!list->is_array()) {
    out.readable = false;
    out.search.reset();
    return out;
  }
  for (const Json& c : *list)
    if (c.is_object()) out.candidates.push_back(candidate_from_json(c, out.candidates.size()));
  return out;
}

DecodedEvidence evidence_from_text(std::string_view text) {
  if (text.empty()) return {};  // no evidence stored
  const Json j = parse(text);
  if (j.is_discarded()) return {{}, std::nullopt, false};
  return evidence_from_json(j);
}

Json device_object(const DeviceIdentity& d) {
  Json j;
  j["backend"] = d.backend;
  j["vendor"] = d.vendor;
  j["product"] = d.product;
  j["architecture"] = d.architecture;
  j["features"] = d.features;
  j["compute_units"] = d.compute_units;
  j["memory_bytes"] = d.memory_bytes;
  j["l1d_bytes"] = d.l1d_bytes;
  j["l2_bytes"] = d.l2_bytes;
  j["l3_bytes"] = d.l3_bytes;
  j["driver"] = d.driver;
  return j;
}

Json toolchain_object(const Toolchain& t) {
  Json j;
  j["tunekit_version"] = t.tunekit_version;
  j["compiler"] = t.compiler;
  j["runtimes"] = t.runtimes;
  return j;
}

Json environment_object(const EnvironmentTags& tags) {
  Json j = Json::object();
  for (const auto& [name, value] : tags) j[name] = value;
  return j;
}

std::string device_json(const DeviceIdentity& device) {
  return device_object(device).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string toolchain_json(const Toolchain& toolchain) {
  return toolchain_object(toolchain).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string environment_json(const EnvironmentTags& tags) {
  return environment_object(tags).dump(-1, ' ', false, Json::error_handler_t::replace);
}

DeviceIdentity device_from_text(std::string_view text) {
  const Json j = parse(text);
  DeviceIdentity d;
  d.backend = get<std::string>(j, "backend", "");
  d.vendor = get<std::string>(j, "vendor", "");
  d.product = get<std::string>(j, "product", "");
  d.architecture = get<std::string>(j, "architecture", "");
  d.features = get<std::vector<std::string>>(j, "features", {});
  d.compute_units = get<int>(j, "compute_units", 0);
  d.memory_bytes = get<std::uint64_t>(j, "memory_bytes", 0);
  d.l1d_bytes = get<std::uint64_t>(j, "l1d_bytes", 0);
  d.l2_bytes = get<std::uint64_t>(j, "l2_bytes", 0);
  d.l3_bytes = get<std::uint64_t>(j, "l3_bytes", 0);
  d.driver = get<std::string>(j, "driver", "");
  d.known = !d.product.empty();
  return d;
}

Toolchain toolchain_from_text(std::string_view text) {
  const Json j = parse(text);
  Toolchain t;
  t.tunekit_version = get<std::string>(j, "tunekit_version", "");
  t.compiler = get<std::string>(j, "compiler", "");
  t.runtimes = get<std::vector<std::string>>(j, "runtimes", {});
  return t;
}

EnvironmentTags environment_from_text(std::string_view text) {
  const Json j = parse(text);
  EnvironmentTags tags;
  if (!j.is_object()) return tags;
  for (const auto& [name, value] : j.items())
    tags[name] = value.is_string() ? value.get<std::string>() : value.dump();
  return tags;
}

}  // namespace tunekit::detail
