// Tests src/report/html_reporter.cpp, html_decision.cpp, svg_writer.cpp, svg_plots.cpp and
// rank_correlation.cpp.
//
// Golden files: tests/data/report/*.html and *.svg are the exact output for the fixed report
// of html_fixture.hpp. After an intended change to the page, regenerate them with
//   TUNEKIT_UPDATE_GOLDEN=1 build/tests/tunekit_unit_tests --gtest_filter='HtmlGolden.*'
// and review the diff (git diff tests/data/report) before committing.
#include "report/html_reporter.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report/html_decision.hpp"
#include "report/rank_correlation.hpp"
#include "report/svg_plots.hpp"
#include "report/svg_writer.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/pending.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/stack_summary.hpp"
#include "unit/report/html_fixture.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;
using testing::html_fixed_report;
using testing::html_model;
using testing::html_stored;

std::string page_of(const TuneReport& report) {
  std::ostringstream out;
  detail::HtmlReporter().write(report, out);
  return out.str();
}

std::string decisions_page(const DecisionsReport& report) {
  std::ostringstream out;
  detail::HtmlReporter().write_decisions(report, out);
  return out.str();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line where two texts differ, with the lines around it: what a failing golden
// test shows.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  std::vector<std::string> before;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "no difference";
    if (!more_a || !more_b || la != lb) {
      std::string text = "first difference at line " + std::to_string(line) + ":\n";
      for (const std::string& l : before) text += "  " + l + "\n";
      text += "- " + (more_a ? la : std::string("(end of golden file)")) + "\n";
      text += "+ " + (more_b ? lb : std::string("(end of output)")) + "\n";
      return text;
    }
    before.push_back(la);
    if (before.size() > 3) before.erase(before.begin());
  }
}

void expect_golden(const std::string& name, const std::string& got) {
  const fs::path path = fs::path(TUNEKIT_TEST_DATA_DIR) / "report" / name;
  const char* update = std::getenv("TUNEKIT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << got;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing: run with TUNEKIT_UPDATE_GOLDEN=1";
  const std::string want = read_file(path);
  EXPECT_TRUE(want == got) << name << " differs from the golden file " << path << "\n"
                           << first_difference(want, got)
                           << "(regenerate with TUNEKIT_UPDATE_GOLDEN=1 if the change is meant)";
}

std::vector<detail::StripRow> fixed_strip_rows() {
  std::vector<detail::StripRow> rows;
  for (const CandidateReport& c : html_fixed_report().candidates)
    if (c.timing) rows.push_back({c.name, c.timing->samples, c.is_default, c.winner});
  return rows;
}

TEST(HtmlGolden, StripBoxPlotOfTheFixedReport) {
  expect_golden("strip_box.svg", detail::strip_box_plot(fixed_strip_rows()));
}

TEST(HtmlGolden, DecisionPageOfTheFixedReport) {
  expect_golden("decision.html", page_of(html_fixed_report()));
}

TEST(HtmlGolden, StorePageWithTheFleetViewAndTheModelScatter) {
  const TuneReport r = html_fixed_report();
  DecisionsReport report;
  report.list.store = "sqlite:/tmp/choices.db";
  report.list.choices = {html_stored(r, "aa11"), html_stored(r, "bb22")};
  report.list.choices[1].key = "m=512,n=512,k=512";
  report.list.choices[1].stale = "winner failed re-validation";
  report.models = {html_model(r)};
  report.models_note = "the model is scored for this device (Test CPU 9000) only";
  expect_golden("store.html", decisions_page(report));
}

// The model is scored on this machine: another device type's entry of the same key gets no
// model scatter (it would show this machine's model against that machine's measurements).
TEST(HtmlReporter, ADecisionOfAnotherDeviceGetsNoModelScores) {
  const TuneReport r = html_fixed_report();
  DecisionsReport report;
  report.list.choices = {html_stored(r, "aa11"), html_stored(r, "cc33")};
  report.list.choices[1].device.product = "Other CPU 1";
  report.models = {html_model(r)};
  report.models_note = "the model is scored for this device only";
  const std::string page = decisions_page(report);
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = page.find(what); at != std::string::npos; at = page.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("Spearman rank correlation"), 1u) << page;
  EXPECT_EQ(count("no cost-model scores for this decision"), 1u) << page;
}

TEST(HtmlReporter, IsFoundByName) {
  const auto reporter = make_reporter("html");
  std::ostringstream out;
  reporter->write(html_fixed_report(), out);
  EXPECT_TRUE(contains(out.str(), "<!DOCTYPE html>"));
  EXPECT_TRUE(contains(out.str(), "</html>"));
}

TEST(HtmlReporter, DecisionPageHasEveryPlotAndMarksTheDefaultAndTheWinner) {
  const std::string page = page_of(html_fixed_report());
  for (const char* heading : {"Samples", "Speed vs default", "Search: best so far",
                              "Model score vs measured", "Failures by class"})
    EXPECT_TRUE(contains(page, std::string("<h3>") + heading)) << heading;
  EXPECT_TRUE(contains(page, "\xE2\x98\x85 tiled_4x8"));  // the winner's star
  EXPECT_TRUE(contains(page, "naive (default)"));
  EXPECT_TRUE(contains(page, "4.00\xC3\x97"));  // speed vs default
  EXPECT_TRUE(contains(page, "validation_failed"));
  EXPECT_TRUE(contains(page, "out_of_memory"));
  // A run's report has no model scores: the page says so instead of drawing nothing.
  EXPECT_TRUE(contains(page, "no cost-model scores for this decision"));
  // Self-contained: nothing to fetch, nothing to run.
  EXPECT_TRUE(contains(page, "default-src 'none'"));
  EXPECT_FALSE(contains(page, "<script"));
  std::string urls = page;  // only the SVG namespace may name a URL
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (auto at = urls.find(ns); at != std::string::npos; at = urls.find(ns))
    urls.erase(at, ns.size());
  EXPECT_FALSE(contains(urls, "http:") || contains(urls, "https:") || contains(urls, "url("))
      << "a page that names a URL could fetch it";
  EXPECT_FALSE(contains(urls, "src="));
}

TEST(HtmlReporter, OutsideNamesAreEscapedEverywhere) {
  TuneReport r = html_fixed_report();
  const std::string hostile = "<script>alert('x')</script>&\"";
  r.op = hostile;
  r.key = hostile;
  r.device = hostile;
  r.candidates[1].name = hostile;
  r.candidates[1].config = hostile;
  r.candidates[2].outcome.message = hostile;
  r.winner_name = hostile;
  const std::string page = page_of(r);
  EXPECT_FALSE(contains(page, "<script")) << "a name reached the page unescaped";
  EXPECT_FALSE(contains(page, "alert('x')"));
  EXPECT_TRUE(contains(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"));
  // Control characters cannot reach the page either.
  EXPECT_EQ(detail::html_escape(std::string("a\x1b[31mb\0c", 9)),
            "a\xEF\xBF\xBD[31mb\xEF\xBF\xBD"
            "c");
}

TEST(HtmlReporter, ADecisionWithoutSamplesSaysSo) {
  TuneReport r = html_fixed_report();
  for (CandidateReport& c : r.candidates) c.timing.reset();
  const std::string page = page_of(r);
  EXPECT_TRUE(contains(page, "no samples stored for this decision"));
  for (CandidateReport& c : r.candidates) {
    c.outcome.status = Status::skipped;
    c.score = 0;
  }
  const std::string none = page_of(r);
  EXPECT_TRUE(contains(none, "no candidate of this decision was measured"));
  r.candidates.clear();
  const std::string empty = page_of(r);
  EXPECT_TRUE(contains(empty, "no candidate evidence stored for this decision"));
}

TEST(HtmlReporter, NoFailuresSaysSo) {
  TuneReport r = html_fixed_report();
  r.candidates.erase(r.candidates.begin() + 4);
  r.candidates.erase(r.candidates.begin() + 2);
  EXPECT_TRUE(contains(page_of(r), "no candidate failed"));
}

TEST(HtmlReporter, TheFleetViewHasOneRowPerKeyLinkingItsSection) {
  const TuneReport r = html_fixed_report();
  DecisionsReport report;
  report.list.choices = {html_stored(r, "aa"), html_stored(r, "bb"), html_stored(r, "cc")};
  report.list.choices[1].key = "m=1,n=1,k=1";
  report.list.choices[2].key = "m=2,n=2,k=2";
  report.models_note = "this device has no profile: run 'tunekit calibrate'";
  const std::string page = decisions_page(report);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(contains(page, "href=\"#d" + std::to_string(i) + "\""));
    EXPECT_TRUE(contains(page, "<section id=\"d" + std::to_string(i) + "\">"));
  }
  EXPECT_TRUE(contains(page, "no cost-model scores for this decision: this device has no profile"));
}

TEST(HtmlReporter, AnEmptyStoreSaysSo) {
  DecisionsReport report;
  report.list.op = "sum";
  EXPECT_TRUE(contains(decisions_page(report), "no stored decisions of sum"));
}

TEST(HtmlReporter, ModelPageShowsSpearman) {
  const TuneReport r = html_fixed_report();
  std::ostringstream out;
  detail::HtmlReporter().write(html_model(r), out);
  // Model order 5 6 3 1 7 0 against measured 5 6 3 7 1 0: one swapped pair.
  EXPECT_TRUE(contains(out.str(), "Spearman rank correlation: 0.94")) << out.str();
  ModelReport unscored = html_model(r);
  for (ModelCandidate& c : unscored.candidates) c.scored = false;
  std::ostringstream none;
  detail::HtmlReporter().write(unscored, none);
  EXPECT_TRUE(contains(none.str(), "no candidate has both a model score and a measurement"));
}

TEST(HtmlReporter, ReportsWithoutAPageAreAUsageErrorSayingWhatToUse) {
  detail::HtmlReporter html;
  std::ostringstream out;
  try {
    html.write(PendingMissList{}, out);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_TRUE(contains(e.what(), "use the console or json reporter")) << e.what();
  }
  EXPECT_THROW(html.write(std::vector<PendingOutcome>{}, out), UsageError);
  EXPECT_THROW(html.write(stack::StackSummary{}, out), UsageError);
  // And the other reporters do not write the store page.
  EXPECT_THROW(make_reporter("console")->write_decisions(DecisionsReport{}, out), UsageError);
  EXPECT_THROW(make_reporter("json")->write_decisions(DecisionsReport{}, out), UsageError);
}

TEST(HtmlReportFile, RefusesADirectoryAFifoAndASymlink) {
  const fs::path dir = fs::temp_directory_path() / ("tunekit_html_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_THROW(write_report_file((dir / "sub").string() + "/", "x"), UsageError);
  fs::create_directory(dir / "a_dir");
  EXPECT_THROW(write_report_file((dir / "a_dir").string(), "x"), UsageError);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_THROW(write_report_file((dir / "fifo").string(), "x"), UsageError);
  std::ofstream(dir / "target") << "keep";
  fs::create_symlink(dir / "target", dir / "link");
  EXPECT_THROW(write_report_file((dir / "link").string(), "x"), UsageError);
  EXPECT_EQ(read_file(dir / "target"), "keep");
  EXPECT_THROW(write_report_file("", "x"), UsageError);
  write_report_file((dir / "ok.html").string(), "<p>ok</p>");
  EXPECT_EQ(read_file(dir / "ok.html"), "<p>ok</p>");
  fs::remove_all(dir);
}

TEST(SvgWriter, ScalesTicksAndNumbersAreFixed) {
  EXPECT_EQ(detail::svg_number(-0.04), "0.0");
  EXPECT_EQ(detail::svg_number(12.345), "12.3");
  const detail::Scale linear = detail::Scale::fit(0, 10, 0, 100, true);
  EXPECT_FALSE(linear.log);
  EXPECT_EQ(linear.ticks(), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_DOUBLE_EQ(linear.at(0), 0);
  const detail::Scale log = detail::Scale::fit(1e-6, 1e-3, 0, 300, true);
  EXPECT_TRUE(log.log);
  EXPECT_EQ(log.ticks().size(), 4u);  // the decades 1 µs .. 1 ms
  EXPECT_LT(log.at(1e-6), log.at(1e-5));
  EXPECT_EQ(detail::clip_text("abcdef", 4), "abc\xE2\x80\xA6");
  EXPECT_EQ(detail::clip_text("abcd", 4), "abcd");
}

// Stored samples are outside data: values one ULP apart, infinities and NaN draw a plot, they
// never hang the report (a step under the values' ULP once looped forever) or print "nan".
TEST(SvgWriter, HostileValuesDrawABoundedPlot) {
  const double lo = 1e-3, hi = std::nextafter(lo, 1.0);
  const detail::Scale tight = detail::Scale::fit(lo, hi, 0, 100, true);
  EXPECT_LE(tight.ticks().size(), 100u);
  EXPECT_FALSE(tight.ticks().empty());
  const double inf = std::numeric_limits<double>::infinity();
  const std::string svg = detail::strip_box_plot(
      {{"a", {lo, hi, hi}, true, false}, {"b", {inf, std::nan(""), 2e-3}, false, true}});
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  const detail::Scale none = detail::Scale::fit(inf, -inf, 0, 100, false);
  EXPECT_LE(none.ticks().size(), 100u);
}

TEST(RankCorrelation, SpearmanOfOrderedTiedAndTooFewPairs) {
  const std::vector<double> a{1, 2, 3, 4}, same{10, 20, 30, 40}, reversed{4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(detail::spearman(a, same), 1.0);
  EXPECT_DOUBLE_EQ(detail::spearman(a, reversed), -1.0);
  const std::vector<double> tied{1, 1, 2, 3};
  EXPECT_NEAR(detail::spearman(tied, same), 0.9486833, 1e-6);
  EXPECT_TRUE(std::isnan(detail::spearman(std::vector<double>{1, 2}, std::vector<double>{1, 2})));
  EXPECT_TRUE(
      std::isnan(detail::spearman(std::vector<double>{1, 1, 1}, std::vector<double>{1, 2, 3})));
}

}  // namespace
}  // namespace tunekit
