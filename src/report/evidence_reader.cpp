#include "report/evidence_reader.hpp"

#include <nlohmann/json.hpp>

namespace tunekit::detail {
namespace {

using Json = nlohmann::json;

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

TimingResult timing_from(const Json& j) {
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
  t.wall_seconds = get<double>(j, "wall_seconds", 0);
  return t;
}

}  // namespace

std::vector<CandidateReport> candidates_from_json(std::string_view evidence) {
  std::vector<CandidateReport> out;
  Json j = Json::parse(evidence.begin(), evidence.end(), nullptr, false);
  // {"search": ..., "candidates": [...]}, or the bare array older entries hold.
  if (j.is_object() && j.contains("candidates")) j = Json(j["candidates"]);
  if (j.is_discarded() || !j.is_array()) return out;
  for (const Json& c : j) {
    if (!c.is_object()) continue;
    CandidateReport r;
    r.index = get<std::size_t>(c, "index", out.size());
    r.name = get<std::string>(c, "name", "");
    r.config = get<std::string>(c, "config", "");
    r.numerics = numerics_from_string(get<std::string>(c, "numerics", "bitwise"))
                     .value_or(Numerics::bitwise);
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
    if (c.contains("timing") && c["timing"].is_object()) r.timing = timing_from(c["timing"]);
    out.push_back(std::move(r));
  }
  return out;
}

void fill_from_evidence(TuneReport& report, std::string_view evidence) {
  report.candidates = candidates_from_json(evidence);
  for (auto& c : report.candidates) {
    c.winner = c.name == report.winner_name;
    c.is_default = c.name == report.default_name;
    if (c.winner && c.outcome.ok()) report.winner_score = c.score;
    if (c.is_default && c.outcome.ok()) report.default_score = c.score;
  }
  if (report.winner_score > 0 && report.default_score > 0)
    report.speedup = report.default_score / report.winner_score;
}

}  // namespace tunekit::detail
