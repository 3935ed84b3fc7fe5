#include "report/json_reporter.hpp"

#include <ostream>
#include <string>

#include "store/evidence_codec.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/store.hpp"

namespace tunekit {
namespace detail {
namespace {

using Json = nlohmann::ordered_json;

std::string as_string(std::string_view text) {
  return std::string(text);
}

Json paired_final_json(const PairedFinal& p) {
  return {{"rival", p.rival}, {"candidate", p.candidate},   {"pairs", p.pairs},
          {"ratio", p.ratio}, {"ratio_high", p.ratio_high}, {"kept_candidate", p.kept_candidate},
          {"why", p.why}};
}

}  // namespace

Json report_json(const TuneReport& r) {
  Json j;
  j["format"] = "tunekit.report";
  j["version"] = 1;
  j["op"] = r.op;
  j["op_checksum"] = r.op_checksum;
  j["key"] = r.key;
  j["key_digest"] = r.key_digest;
  j["device"] = r.device;
  j["source"] = as_string(to_string(r.source));
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
  j["statistic"] = as_string(to_string(r.statistic));
  j["tie_band"] = r.tie_band;
  j["numerics_policy"] = as_string(to_string(r.numerics_policy));
  j["search"] = search_json(search_record(r));
  j["confirmed"] = r.confirmed;
  j["paired_ratio"] = r.paired_ratio;
  j["paired_pairs"] = r.paired_pairs;
  if (const auto& p = r.tie_pairing) j["tie_pairing"] = paired_final_json(*p);
  if (const auto& p = r.anchor_pairing) j["anchor_pairing"] = paired_final_json(*p);
  j["seconds_compiling"] = r.seconds_compiling;
  j["isolation"] = r.isolation;
  j["seconds_validating"] = r.seconds_validating;
  j["seconds_measuring"] = r.seconds_measuring;
  j["seconds_settling"] = r.seconds_settling;
  j["seconds_total"] = r.seconds_total;
  j["candidates"] = Json::array();
  for (const CandidateReport& c : r.candidates) j["candidates"].push_back(candidate_json(c));
  return j;
}

void JsonReporter::write(const TuneReport& report, std::ostream& out) {
  out << to_json(report, indent_) << '\n';
}

void JsonReporter::write(const ModelReport& report, std::ostream& out) {
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
