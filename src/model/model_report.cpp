// Rendering a ModelReport: JSON (every field) and a console table ranked by the model.
#include <algorithm>
#include <ostream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/console_reporter.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/terminal_text.hpp"

namespace tunekit {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson estimate_json(const Estimate& e) {
  return {{"value", e.value}, {"spread", e.spread}};
}

// Which side of the roofline bounds the score.
std::string_view bound(const ModelTime& t) {
  const double memory = t.dram_seconds + t.cache_seconds;
  if (t.compute_seconds >= memory) return "compute";
  return t.dram_seconds >= t.cache_seconds ? "dram" : "cache";
}

// "1.23 ms" style, 3 significant digits.
std::string seconds_text(double s) {
  if (s <= 0) return "-";
  if (s < 1e-6) return fmt::format("{:.3g} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

}  // namespace

std::string to_json(const ModelReport& r, int indent) {
  OrderedJson j;
  j["op"] = r.op;
  j["key"] = r.key;
  if (!r.bucket.empty()) j["bucket"] = r.bucket;
  j["device"] = r.device;
  j["source"] = to_string(r.source);
  j["reason"] = r.reason;
  j["winner"] = r.winner_name;
  j["default"] = r.default_name;
  j["winner_seconds"] = r.winner_seconds;
  j["default_seconds"] = r.default_seconds;
  j["speedup"] = r.speedup;
  j["floor_seconds"] = r.floor_seconds;
  j["numerics_policy"] = to_string(r.numerics_policy);
  j["tie_band"] = r.tie_band;
  j["envelope_origin"] = r.envelope_origin;
  if (r.envelope) {
    const Envelope& e = *r.envelope;
    j["envelope"] = {{"peak_flops_1", estimate_json(e.peak_flops_1)},
                     {"peak_flops_all", estimate_json(e.peak_flops_all)},
                     {"dram_bw_1", estimate_json(e.dram_bw_1)},
                     {"dram_bw_all", estimate_json(e.dram_bw_all)},
                     {"cache_bw_1", estimate_json(e.cache_bw_1)},
                     {"cache_bytes", estimate_json(e.cache_bytes)},
                     {"launch_seconds", estimate_json(e.launch_seconds)},
                     {"threads", e.threads},
                     {"simd_lanes", e.simd_lanes},
                     {"fma_chains", e.fma_chains}};
  } else {
    j["envelope"] = nullptr;
  }
  j["measured_from"] = r.measured_from;
  if (!r.measured_winner.empty()) j["measured_winner"] = r.measured_winner;
  if (const auto& c = r.measured_confidence) {
    j["measured_confidence"] = {{"runner_up", c->runner_up},
                                {"advantage", c->advantage},
                                {"advantage_low", c->advantage_low},
                                {"paired_high", c->paired_high},
                                {"verdict", c->verdict}};
    if (!c->anchor.empty()) {
      j["measured_confidence"]["anchor"] = c->anchor;
      j["measured_confidence"]["anchor_paired_ratio"] = c->anchor_paired_ratio;
      j["measured_confidence"]["anchor_paired_high"] = c->anchor_paired_high;
    }
    if (!c->tie_rival.empty()) {
      j["measured_confidence"]["tie_rival"] = c->tie_rival;
      j["measured_confidence"]["tie_paired_ratio"] = c->tie_paired_ratio;
    }
  }
  if (const auto& f = r.measured_final_race)
    j["measured_final_race"] = {{"finalists", f->finalists},
                                {"seconds", f->seconds},
                                {"search_pick", f->search_pick},
                                {"note", f->note}};
  if (const auto& p = r.measured_cpu_placement) {
    OrderedJson& m = j["measured_cpu_placement"];
    m["before_ns"] = p->before_ns;
    m["after_ns"] = p->after_ns;
    if (p->lowest_ns > 0) m["lowest_ns"] = p->lowest_ns;
    if (p->waits > 0) m["waits"] = p->waits, m["waited_seconds"] = p->waited_seconds;
    if (p->ran_far > 0) m["ran_far"] = p->ran_far;
    m["mixed"] = p->mixed();
  }
  OrderedJson cands = OrderedJson::array();
  for (const ModelCandidate& c : r.candidates) {
    OrderedJson x;
    x["name"] = c.name;
    x["config"] = c.config;
    x["numerics"] = to_string(c.numerics);
    x["default"] = c.is_default;
    x["chosen"] = c.chosen;
    x["admitted"] = c.admission.ok();
    x["admission"] = {{"status", to_string(c.admission.status)}, {"message", c.admission.message}};
    x["scored"] = c.scored;
    if (c.scored) {
      x["seconds"] = c.time.seconds;
      x["compute_seconds"] = c.time.compute_seconds;
      x["dram_seconds"] = c.time.dram_seconds;
      x["cache_seconds"] = c.time.cache_seconds;
      x["launch_seconds"] = c.time.launch_seconds;
      x["rereads_in_cache"] = c.time.reread_in_cache;
      x["bound"] = bound(c.time);
      x["vs_default"] = c.vs_default;
      x["rank"] = c.rank;
    } else {
      x["unscored_why"] = c.unscored_why;
    }
    if (c.measured_seconds) x["measured_seconds"] = *c.measured_seconds;
    if (!c.measured_status.empty()) x["measured_status"] = c.measured_status;
    cands.push_back(std::move(x));
  }
  j["candidates"] = std::move(cands);
  return j.dump(indent);
}

void write_console(const ModelReport& r, std::ostream& out) {
  out << fmt::format("{} {}  on {}\n", r.op, r.key, r.device.empty() ? "?" : r.device);
  if (!r.bucket.empty()) out << fmt::format("bucket: {}\n", r.bucket);
  out << fmt::format("envelope: {}\n", r.envelope_origin.empty() ? "none" : r.envelope_origin);
  if (r.source == Source::model) {
    out << fmt::format("model pick: {}  (model {} vs default {} {}: {:.2f}x)\n", r.winner_name,
                       seconds_text(r.winner_seconds), r.default_name,
                       seconds_text(r.default_seconds), r.speedup);
  } else {
    out << fmt::format("default stands: {}  ({})\n", r.default_name, r.reason);
  }
  if (r.floor_seconds > 0)
    out << fmt::format("roofline floor: {}\n", seconds_text(r.floor_seconds));
  if (!r.measured_from.empty()) {
    out << fmt::format("measured: {}\n", r.measured_from);
    if (!r.measured_winner.empty())
      out << "stored decision: " << terminal_safe(r.measured_winner)
          << (r.measured_confidence ? ", " + detail::confidence_text(*r.measured_confidence)
                                    : std::string(" (no confidence recorded)"))
          << '\n';
    if (r.measured_final_race && !r.measured_winner.empty())
      out << "final race: " << detail::final_race_text(*r.measured_final_race, r.measured_winner)
          << '\n';
    if (r.measured_cpu_placement)
      out << "CPUs: " << detail::placement_text(*r.measured_cpu_placement) << '\n';
  }

  std::vector<const ModelCandidate*> rows;
  for (const auto& c : r.candidates) rows.push_back(&c);
  std::stable_sort(rows.begin(), rows.end(), [](const ModelCandidate* a, const ModelCandidate* b) {
    const int ra = a->rank > 0 ? a->rank : 1 << 30, rb = b->rank > 0 ? b->rank : 1 << 30;
    return ra < rb;
  });
  std::size_t width = 9;
  for (const auto* c : rows) width = std::max(width, c->name.size());
  out << fmt::format("{:>4}  {:<{}}  {:>10}  {:>7}  {:<7}  {:>10}  {}\n", "rank", "candidate",
                     width, "model", "vs def", "bound", "measured", "admission");
  for (const auto* c : rows) {
    std::string mark = c->chosen ? " *" : (c->is_default ? " d" : "");
    std::string measured = c->measured_seconds
                               ? seconds_text(*c->measured_seconds)
                               : (c->measured_status.empty() ? "-" : c->measured_status);
    std::string admission(to_string(c->admission.status));
    if (!c->admission.ok()) admission += ": " + c->admission.message;
    out << fmt::format("{:>4}  {:<{}}  {:>10}  {:>7}  {:<7}  {:>10}  {}{}\n",
                       c->rank > 0 ? std::to_string(c->rank) : "-", c->name, width,
                       c->scored ? seconds_text(c->time.seconds) : "unscored",
                       c->scored && c->vs_default > 0 ? fmt::format("{:.2f}x", c->vs_default) : "-",
                       c->scored ? std::string(bound(c->time)) : "-", measured, admission, mark);
  }
  out << "(* chosen, d default; model seconds rank candidates, they do not predict times)\n";
}

}  // namespace tunekit
