#include "report/html_decision.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/console_reporter.hpp"  // format_seconds, iso_time, distinct_text, placement_text
#include "report/rank_correlation.hpp"
#include "report/svg_plots.hpp"
#include "report/svg_writer.hpp"

namespace tunekit::detail {
namespace {

constexpr std::size_t kMaxStripRows = 40;  // a space op may have hundreds of points
constexpr std::size_t kMessageChars = 160;

std::string esc(std::string_view text) {
  return html_escape(text);
}

std::string note(std::string_view text) {
  return fmt::format("<p class=\"none\">{}</p>\n", esc(text));
}

std::string times_text(double ratio) {
  return ratio > 0 && std::isfinite(ratio) ? fmt::format("{:.2f}\xC3\x97", ratio) : "-";  // ×
}

bool has_samples(const CandidateReport& c) {
  return c.timing && !c.timing->samples.empty();
}

std::string facts_table(const std::vector<std::pair<std::string, std::string>>& facts) {
  std::string html = "<table class=\"facts\">\n";
  for (const auto& [label, value] : facts)
    if (!value.empty())
      html += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", esc(label), esc(value));
  return html + "</table>\n";
}

std::vector<StripRow> strip_rows(const std::vector<CandidateReport>& candidates,
                                 std::size_t& left_out) {
  std::vector<const CandidateReport*> measured;
  for (const CandidateReport& c : candidates)
    if (has_samples(c)) measured.push_back(&c);
  std::stable_sort(measured.begin(), measured.end(), [](const auto* a, const auto* b) {
    return a->timing->median < b->timing->median;
  });
  std::vector<StripRow> rows;
  left_out = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const CandidateReport& c = *measured[i];
    // The fastest rows, and always the default and the winner.
    if (rows.size() >= kMaxStripRows - 2 && !c.is_default && !c.winner) {
      ++left_out;
      continue;
    }
    rows.push_back({c.name, c.timing->samples, c.is_default, c.winner});
  }
  return rows;
}

std::string samples_figure(const std::vector<CandidateReport>& candidates) {
  std::string html = "<h3>Samples</h3>\n";
  std::size_t left_out = 0;
  const std::vector<StripRow> rows = strip_rows(candidates, left_out);
  if (rows.empty()) return html + note("no samples stored for this decision");
  html += "<figure>\n" + strip_box_plot(rows);
  html +=
      "<figcaption>Every timed sample of each measured candidate (dots), the 25th to 75th "
      "percentile (box) with the median (bar), whiskers to the extremes. "
      "<span class=\"win\">\xE2\x98\x85 winner</span>, <span class=\"def\">default</span>. "
      "Fastest first.";
  if (left_out > 0) html += fmt::format(" {} slower candidates not drawn.", left_out);
  return html + "</figcaption>\n</figure>\n";
}

std::string speed_table(const std::vector<CandidateReport>& candidates) {
  std::string html = "<h3>Speed vs default</h3>\n";
  if (candidates.empty()) return html + note("no candidate evidence stored for this decision");
  html +=
      "<table class=\"cands\">\n<tr><th>#</th><th>candidate</th><th>status</th><th>median</th>"
      "<th>min</th><th>MAD</th><th>samples</th><th>vs default</th><th>why</th></tr>\n";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const CandidateReport& c = candidates[i];
    const std::string cls = c.winner ? " class=\"win\"" : c.is_default ? " class=\"def\"" : "";
    std::string name = esc(c.name);
    if (c.winner) name = "\xE2\x98\x85 " + name;
    if (c.is_default) name += " (default)";
    const bool timed = c.timing && c.outcome.ok();
    html += fmt::format(
        "<tr{}><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        cls, i + 1, esc(c.config), name, esc(to_string(c.outcome.status)),
        timed ? format_seconds(c.timing->median) : "-", timed ? format_seconds(c.timing->min) : "-",
        timed ? format_seconds(c.timing->mad) : "-", c.timing ? c.timing->samples.size() : 0,
        c.outcome.ok() ? times_text(c.vs_default) : "-",
        esc(clip_text(c.outcome.message, kMessageChars)));
  }
  return html + "</table>\n";
}

std::string search_figures(const std::vector<CandidateReport>& candidates) {
  std::string html = "<h3>Search: best so far</h3>\n";
  std::vector<CurvePoint> by_evaluation, by_time;
  double best = 0, elapsed = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const CandidateReport& c = candidates[i];
    elapsed += c.compile_seconds + (c.timing ? c.timing->wall_seconds : 0);
    if (c.outcome.ok() && c.score > 0 && (best == 0 || c.score < best)) best = c.score;
    if (best == 0) continue;
    by_evaluation.push_back({static_cast<double>(i + 1), best});
    by_time.push_back({elapsed, best});
  }
  if (by_evaluation.empty()) return html + note("no candidate of this decision was measured");
  html += "<div class=\"row\"><figure>\n" + best_so_far_plot(by_evaluation, "evaluations", false);
  html +=
      "<figcaption>Best score after each evaluation, in the order the search ran "
      "them.</figcaption></figure>\n<figure>\n";
  if (elapsed > 0) {
    html += best_so_far_plot(by_time, "compile + measuring seconds", true);
    html +=
        "<figcaption>The same against the time spent building and timing candidates "
        "(validation excluded).</figcaption>";
  } else {
    html += note("no compile or measuring time recorded for this decision");
  }
  return html + "</figure></div>\n";
}

std::string failures_figure(const std::vector<CandidateReport>& candidates) {
  std::string html = "<h3>Failures by class</h3>\n";
  std::map<Status, std::size_t> counts;
  for (const CandidateReport& c : candidates)
    if (!c.outcome.ok()) ++counts[c.outcome.status];
  if (candidates.empty()) return html + note("no candidate evidence stored for this decision");
  if (counts.empty()) return html + note("no candidate failed");
  std::vector<BarRow> rows;
  for (const auto& [status, count] : counts)
    rows.push_back({std::string(to_string(status)), static_cast<double>(count)});
  return html + "<figure>\n" + bar_chart(rows, "candidates") + "</figure>\n";
}

// The measured seconds of each model candidate, by name, from the decision's evidence.
std::vector<std::optional<double>> measured_by_name(const ModelReport& model,
                                                    const std::vector<CandidateReport>& evidence) {
  std::vector<std::optional<double>> out;
  for (const ModelCandidate& m : model.candidates) {
    std::optional<double> seconds;
    for (const CandidateReport& c : evidence)
      if (c.name == m.name && c.outcome.ok() && c.score > 0) seconds = c.score;
    out.push_back(seconds);
  }
  return out;
}

std::string model_section(const DecisionView& view) {
  std::string html = "<h3>Model score vs measured</h3>\n";
  if (!view.model) {
    return html + note(view.model_note.empty()
                           ? "no cost-model scores for this decision"
                           : "no cost-model scores for this decision: " + view.model_note);
  }
  return html + model_figure(*view.model, measured_by_name(*view.model, view.candidates));
}

}  // namespace

std::string model_figure(const ModelReport& model,
                         const std::vector<std::optional<double>>& measured) {
  std::vector<ScatterPoint> points;
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < model.candidates.size() && i < measured.size(); ++i) {
    const ModelCandidate& m = model.candidates[i];
    if (!m.scored || m.time.seconds <= 0 || !measured[i] || *measured[i] <= 0) continue;
    points.push_back({m.name, m.time.seconds, *measured[i], m.is_default, m.chosen});
    xs.push_back(m.time.seconds);
    ys.push_back(*measured[i]);
  }
  if (points.empty()) return note("no candidate has both a model score and a measurement");
  const double rho = spearman(xs, ys);
  std::string html = "<figure>\n" + scatter_plot(points, "model score (s)", "measured (s)");
  html += fmt::format(
      "<figcaption>Each candidate the model scored and the store measured ({} points). "
      "Spearman rank correlation: {}. <span class=\"win\">The model's pick</span>, "
      "<span class=\"def\">default</span>.</figcaption>\n</figure>\n",
      points.size(),
      std::isnan(rho) ? std::string("not defined (fewer than 3 points, or no spread)")
                      : fmt::format("{:.2f}", rho));
  return html;
}

double stored_speedup(const StoredChoice& choice) {
  double default_seconds = 0, winner_seconds = 0;
  for (const CandidateReport& c : choice.evidence) {
    if (!c.outcome.ok() || c.score <= 0) continue;
    if (c.is_default) default_seconds = c.score;
    if (c.winner || c.name == choice.winner) winner_seconds = c.score;
  }
  return default_seconds > 0 && winner_seconds > 0 ? default_seconds / winner_seconds : 0;
}

DecisionView decision_view(const TuneReport& r) {
  DecisionView v;
  v.anchor = "decision";
  v.op = r.op;
  v.key = r.key;
  v.winner = r.winner_name;
  v.default_name = r.default_name;
  v.candidates = r.candidates;
  const std::string speedup =
      r.default_score > 0 && r.winner_score > 0 ? times_text(r.speedup) : "-";
  v.facts = {
      {"device", r.device},
      {"source", std::string(to_string(r.source)) + (r.reason.empty() ? "" : ": " + r.reason)},
      {"bucket", r.bucket},
      {"winner", r.winner_name},
      {"default", r.default_name},
      {"speed vs default", speedup},
      {"statistic", fmt::format("{}, tie band {:.1f} %", to_string(r.statistic), 100 * r.tie_band)},
      {"strategy",
       r.strategy.empty() ? "" : fmt::format("{} / {} (seed {})", r.strategy, r.schedule, r.seed)},
      {"stopped because", r.stop_reason},
      {"budget", r.budget.stopped},
      {"candidates", fmt::format("{} evaluated of {}{}", r.candidates.size(), r.space_size,
                                 distinct_text(r.distinct_points, r.space_size))},
      {"time", fmt::format("{} total: {} compiling, {} validating, {} measuring",
                           seconds_tick(r.seconds_total), seconds_tick(r.seconds_compiling),
                           seconds_tick(r.seconds_validating), seconds_tick(r.seconds_measuring))},
      {"isolation", r.isolation},
      {"CPUs", placement_text(r.cpu_placement)},
      {"stale choice passed over", r.stale},
  };
  v.model_note =
      "a run's report carries none; 'tunekit report' adds them for this device's stored "
      "decisions once it has a profile ('tunekit calibrate')";
  return v;
}

DecisionView decision_view(const StoredChoice& c, std::string anchor) {
  DecisionView v;
  v.anchor = std::move(anchor);
  v.op = c.op;
  v.key = c.key;
  v.winner = c.winner;
  for (const CandidateReport& e : c.evidence)
    if (e.is_default) v.default_name = e.name;
  v.candidates = c.evidence;
  const SearchRecord s = c.search.value_or(SearchRecord{});
  v.facts = {
      {"device", c.device.product.empty() ? "(unknown product)" : c.device.product},
      {"identity", c.identity_digest},
      {"winner", c.winner + (c.winner_config.empty() ? "" : " (" + c.winner_config + ")")},
      {"default", v.default_name},
      {"speed vs default", times_text(stored_speedup(c))},
      {"strategy",
       s.strategy.empty() ? "" : fmt::format("{} / {} (seed {})", s.strategy, s.schedule, s.seed)},
      {"stopped because", s.stop_reason},
      {"bucket", s.bucket},
      {"budget", c.budget_cut ? "cut: the search ended before its strategy did" : ""},
      {"CPUs", placement_text(s.cpu_placement)},
      {"measured", c.measured ? "" : "no: not a measured choice"},
      {"stale", c.stale},
      {"stored", fmt::format("{} by tunekit {}", iso_time(c.created_at), c.tunekit_version)},
  };
  return v;
}

std::string decision_section(const DecisionView& v) {
  std::string html = fmt::format("<section id=\"{}\">\n<h2>{} <span class=\"key\">{}</span></h2>\n",
                                 esc(v.anchor), esc(v.op), esc(v.key));
  html += facts_table(v.facts);
  html += samples_figure(v.candidates);
  html += speed_table(v.candidates);
  html += search_figures(v.candidates);
  html += model_section(v);
  html += failures_figure(v.candidates);
  return html + "</section>\n";
}

}  // namespace tunekit::detail
