#include "report/json_reporter.hpp"

#include <ostream>
#include <string>

#include "tunekit/candidate.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/value.hpp"

namespace tunekit {
namespace detail {
namespace {

using Json = nlohmann::ordered_json;

std::string str(std::string_view text) {
  return std::string(text);
}

// A typed view of a config's text ({"mc": 64, "order": "ikj"}); null when it does not parse.
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
  j["timing"] = c.timing ? timing_json(*c.timing) : Json(nullptr);
  return j;
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
  j["wall_seconds"] = t.wall_seconds;
  return j;
}

Json search_json(const TuneReport& r) {
  Json j;
  j["strategy"] = r.strategy;
  j["schedule"] = r.schedule;
  j["seed"] = r.seed;
  j["space_size"] = r.space_size;
  j["evaluated"] = r.candidates.size();
  j["stop_reason"] = r.stop_reason;
  Json b;
  b["seconds"] = r.budget.seconds;
  b["evaluations"] = r.budget.evaluations;
  b["cut"] = r.budget.cut;
  b["stopped"] = r.budget.stopped;
  b["reserve_seconds"] = r.budget.reserve_seconds;
  b["not_started"] = r.budget.not_started;
  j["budget"] = std::move(b);
  return j;
}

std::string evidence_text(const TuneReport& r) {
  Json j;
  j["search"] = search_json(r);
  j["candidates"] = report_json(r)["candidates"];
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json report_json(const TuneReport& r) {
  Json j;
  j["format"] = "tunekit.report";
  j["version"] = 1;
  j["op"] = r.op;
  j["op_checksum"] = r.op_checksum;
  j["key"] = r.key;
  j["key_digest"] = r.key_digest;
  j["device"] = r.device;
  j["source"] = str(to_string(r.source));
  j["reason"] = r.reason;
  if (!r.bucket.empty()) j["bucket"] = r.bucket;
  if (!r.stale.empty()) j["stale"] = r.stale;
  j["winner"] = r.winner_name;
  j["winner_index"] = r.winner;
  j["default"] = r.default_name;
  j["default_index"] = r.default_index;
  j["winner_score"] = r.winner_score;
  j["default_score"] = r.default_score;
  j["speedup"] = r.speedup;
  j["statistic"] = str(to_string(r.statistic));
  j["tie_band"] = r.tie_band;
  j["numerics_policy"] = str(to_string(r.numerics_policy));
  j["search"] = search_json(r);
  j["confirmed"] = r.confirmed;
  j["paired_ratio"] = r.paired_ratio;
  j["paired_pairs"] = r.paired_pairs;
  j["seconds_compiling"] = r.seconds_compiling;
  j["isolation"] = r.isolation;
  j["seconds_validating"] = r.seconds_validating;
  j["seconds_measuring"] = r.seconds_measuring;
  j["seconds_total"] = r.seconds_total;
  j["candidates"] = Json::array();
  for (const CandidateReport& c : r.candidates) j["candidates"].push_back(candidate_json(c));
  return j;
}

void JsonReporter::write(const TuneReport& report, std::ostream& out) {
  out << to_json(report, indent_) << '\n';
}

}  // namespace detail

std::string to_json(const TuneReport& report, int indent) {
  // Messages may carry compiler logs in any encoding: invalid UTF-8 becomes U+FFFD rather
  // than an exception. Non-finite numbers are written as null.
  return detail::report_json(report).dump(indent, ' ', false,
                                          nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace tunekit
