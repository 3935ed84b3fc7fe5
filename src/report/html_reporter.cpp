#include "report/html_reporter.hpp"

#include <ostream>
#include <string>

#include <fmt/format.h>

#include "core/safe_file.hpp"
#include "report/html_decision.hpp"
#include "report/svg_writer.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

// Styles only; default-src 'none' keeps the page from fetching or running anything.
constexpr const char* kHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; background: #fff; }}
h1 {{ font-size: 1.4em; }} h2 {{ font-size: 1.2em; border-top: 2px solid #ccc; padding-top: .6em; }}
h3 {{ font-size: 1em; margin: 1.2em 0 .3em; }} .key {{ font-weight: normal; color: #555; }}
table {{ border-collapse: collapse; margin: .3em 0; }} td, th {{ padding: 2px 8px; text-align: left; vertical-align: top; }}
table.cands tr:nth-child(even), table.fleet tr:nth-child(even) {{ background: #f4f4f4; }}
td {{ white-space: nowrap; }} table.cands td:last-child, table.facts td {{ white-space: normal; }}
table.facts th {{ color: #555; font-weight: normal; }} tr.win td {{ font-weight: bold; }}
.win {{ color: #1a7f37; }} .def {{ color: #b35900; }} .none {{ color: #777; font-style: italic; }}
figure {{ margin: .4em 0; }} figcaption {{ color: #555; font-size: .9em; max-width: 760px; }}
.row {{ display: flex; gap: 1.5em; flex-wrap: wrap; }}
svg text {{ font: 11px system-ui, sans-serif; fill: #222; }} svg text.label {{ font-size: 12px; fill: #444; }}
svg text.name.win {{ fill: #1a7f37; font-weight: bold; }} svg text.name.def {{ fill: #b35900; }}
svg .axis {{ stroke: #444; }} svg .grid {{ stroke: #e4e4e4; }} svg .whisker {{ stroke: #888; }}
svg .median {{ stroke: #000; stroke-width: 2; }} svg .box {{ fill-opacity: .25; stroke-width: 1; }}
svg .box.cand, svg .pt.cand {{ fill: #4a6fa5; stroke: #4a6fa5; }} svg .box.win, svg .pt.win {{ fill: #1a7f37; stroke: #1a7f37; }}
svg .box.def, svg .pt.def {{ fill: #b35900; stroke: #b35900; }} svg .pt {{ fill-opacity: .6; stroke-width: 0; }}
svg .curve {{ fill: none; stroke: #1a7f37; stroke-width: 2; }} svg .bar {{ fill: #c0392b; }}
</style>
</head>
<body>
)";

std::string page(const std::string& title, const std::string& body) {
  return fmt::format(kHead, html_escape(title)) + "<h1>" + html_escape(title) + "</h1>\n" + body +
         "<footer><p class=\"none\">Written by tunekit. Self-contained: no script, nothing "
         "fetched.</p></footer>\n</body>\n</html>\n";
}

std::string times(double ratio) {
  return ratio > 0 ? fmt::format("{:.2f}\xC3\x97", ratio) : "-";
}

std::size_t failures(const StoredChoice& c) {
  std::size_t n = 0;
  for (const CandidateReport& e : c.evidence) n += e.outcome.ok() ? 0 : 1;
  return n;
}

std::string fleet_table(const StoredChoiceList& list) {
  std::string html = "<h2>Fleet</h2>\n";
  if (list.choices.empty())
    return html + "<p class=\"none\">no stored decisions" +
           (list.op.empty() ? std::string() : " of " + html_escape(list.op)) + "</p>\n";
  html +=
      "<table class=\"fleet\">\n<tr><th>op</th><th>key</th><th>device</th><th>winner</th>"
      "<th>vs default</th><th>candidates</th><th>failed</th><th>state</th></tr>\n";
  for (std::size_t i = 0; i < list.choices.size(); ++i) {
    const StoredChoice& c = list.choices[i];
    const std::string state = !c.stale.empty() ? "stale" : c.budget_cut ? "budget cut" : "serves";
    html += fmt::format(
        "<tr><td>{}</td><td><a href=\"#d{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        html_escape(c.op), i + 1, html_escape(c.key), html_escape(c.device.product),
        html_escape(c.winner), times(stored_speedup(c)), c.evidence.size(), failures(c), state);
  }
  return html + "</table>\n";
}

// The model's view of this decision's key on this decision's device: an entry of another
// device type with the same key gets no model scores (they would be this machine's).
const ModelReport* model_for(const DecisionsReport& report, const StoredChoice& c) {
  for (const ModelReport& m : report.models)
    if (m.op == c.op && m.key == c.key && m.device == c.device.product) return &m;
  return nullptr;
}

[[noreturn]] void no_page(std::string_view what) {
  throw UsageError(fmt::format(
      "the html reporter writes tune reports, model reports and stored decisions ('tunekit "
      "report'), not {}: use the console or json reporter",
      what));
}

}  // namespace

void HtmlReporter::write(const TuneReport& report, std::ostream& out) {
  out << page(fmt::format("tunekit: {} {}", report.op, report.key),
              decision_section(decision_view(report)));
}

void HtmlReporter::write(const ModelReport& report, std::ostream& out) {
  std::vector<std::optional<double>> measured;
  for (const ModelCandidate& c : report.candidates) measured.push_back(c.measured_seconds);
  std::string body = fmt::format(
      "<table class=\"facts\"><tr><th>device</th><td>{}</td></tr><tr><th>model pick</th>"
      "<td>{}</td></tr><tr><th>default</th><td>{}</td></tr><tr><th>envelope</th><td>{}</td></tr>"
      "<tr><th>measurements from</th><td>{}</td></tr></table>\n<h3>Model score vs measured</h3>\n",
      html_escape(report.device), html_escape(report.winner_name), html_escape(report.default_name),
      html_escape(report.envelope_origin.empty() ? "none" : report.envelope_origin),
      html_escape(report.measured_from.empty() ? "no store" : report.measured_from));
  body += model_figure(report, measured);
  out << page(fmt::format("tunekit model: {} {}", report.op, report.key), body);
}

void HtmlReporter::write_decisions(const DecisionsReport& report, std::ostream& out) {
  const StoredChoiceList& list = report.list;
  std::string body = fmt::format("<p>Store: {}{}</p>\n", html_escape(list.store),
                                 list.op.empty() ? "" : ", op " + html_escape(list.op));
  body += fleet_table(list);
  for (std::size_t i = 0; i < list.choices.size(); ++i) {
    DecisionView view = decision_view(list.choices[i], fmt::format("d{}", i + 1));
    view.model = model_for(report, list.choices[i]);
    view.model_note = report.models_note;
    body += decision_section(view);
  }
  out << page("tunekit report", body);
}

void HtmlReporter::write(const StoredChoiceList& list, std::ostream& out) {
  write_decisions(DecisionsReport{list, {}, "'tunekit report' adds them"}, out);
}

void HtmlReporter::write(const std::vector<StoredChoiceDetail>& shown, std::ostream& out) {
  StoredChoiceList list;
  for (const StoredChoiceDetail& d : shown) list.choices.push_back(d.choice);
  write(list, out);
}

void HtmlReporter::write(const PendingMissList&, std::ostream&) {
  no_page("pending misses");
}
void HtmlReporter::write(const PendingOutcome&, std::ostream&) {
  no_page("pending outcomes");
}
void HtmlReporter::write(const std::vector<PendingOutcome>&, std::ostream&) {
  no_page("pending outcomes");
}
void HtmlReporter::write(const stack::StackSummary&, std::ostream&) {
  no_page("stack decisions");
}
void HtmlReporter::write(const StoreSyncSummary&, std::ostream&) {
  no_page("store copies (cache push/pull)");
}

}  // namespace tunekit::detail

namespace tunekit {

void write_report_file(const std::string& path, std::string_view text) {
  if (path.empty()) throw UsageError("the report needs a file name: --out FILE (or --html FILE)");
  detail::write_file_atomically(path, text, "HTML report");
}

}  // namespace tunekit
