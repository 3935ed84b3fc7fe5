// Tests src/report/reporter.cpp, console_reporter.cpp and json_reporter.cpp.
#include "report/console_reporter.hpp"
#include "report/json_reporter.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tunekit/errors.hpp"
#include "tunekit/reporter.hpp"

namespace tunekit {
namespace {

using nlohmann::json;

TimingResult timing(double median, std::size_t count) {
  TimingResult t;
  t.mode = TimingMode::queued;
  t.clock = "steady_clock";
  for (std::size_t i = 0; i < count; ++i) t.samples.push_back(median * (1.0 + 0.01 * double(i)));
  t.min = median;
  t.median = median;
  t.mean = median * 1.01;
  t.mad = median * 0.02;
  t.p10 = median * 0.99;
  t.p90 = median * 1.05;
  t.depth = 8;
  t.dispatches = static_cast<long long>(count * 8 + 1);
  t.stalled_fraction = 0.125;
  t.contended = false;
  t.wall_seconds = 0.5;
  return t;
}

CandidateReport candidate(std::size_t index, std::string name, Status status, double score) {
  CandidateReport c;
  c.index = index;
  c.name = std::move(name);
  c.config = "mc=" + std::to_string(32 * (index + 1)) + ",order=ikj";
  c.numerics = Numerics::reassociates;
  c.group = static_cast<int>(index % 2);
  c.preference = static_cast<int>(index);
  c.outcome.status = status;
  if (status != Status::ok) c.outcome.message = "element 3: got nan, expected 1.5";
  if (status == Status::ok) {
    c.timing = timing(score, 16);
    c.score = score;
  }
  return c;
}

// Three candidates: the default (2 ms), the winner (1 ms), and one that failed validation.
TuneReport sample_report() {
  TuneReport r;
  r.op = "sgemm";
  r.op_checksum = "0123456789abcdef0123456789abcdef";
  r.key = "m=256,n=256,k=256";
  r.key_digest = "fedcba9876543210fedcba9876543210";
  r.device = "Test CPU 9000";
  r.source = Source::searched;
  r.reason = "no stored choice";
  r.winner = 1;
  r.winner_name = "blocked_4x8";
  r.default_index = 0;
  r.default_name = "naive";
  r.winner_score = 1e-3;
  r.default_score = 2e-3;
  r.speedup = 2.0;
  r.statistic = Statistic::min;
  r.tie_band = 0.03;
  r.numerics_policy = Numerics::bitwise;
  r.seconds_validating = 0.25;
  r.seconds_measuring = 1.5;
  r.seconds_settling = 0.25;
  r.seconds_total = 2.0;
  r.candidates.push_back(candidate(0, "naive", Status::ok, 2e-3));
  r.candidates.push_back(candidate(1, "blocked_4x8", Status::ok, 1e-3));
  r.candidates.push_back(candidate(2, "avx_broken", Status::validation_failed, 0));
  r.candidates[0].is_default = true;
  r.candidates[0].vs_default = 1.0;
  r.candidates[1].winner = true;
  r.candidates[1].vs_default = 2.0;
  r.candidates[1].retries = 1;
  return r;
}

TEST(JsonReporter, EveryReportFieldRoundTrips) {
  const TuneReport r = sample_report();
  const json j = json::parse(to_json(r));

  EXPECT_EQ(j.at("op"), r.op);
  EXPECT_EQ(j.at("op_checksum"), r.op_checksum);
  EXPECT_EQ(j.at("key"), r.key);
  EXPECT_EQ(j.at("key_digest"), r.key_digest);
  EXPECT_EQ(j.at("device"), r.device);
  EXPECT_EQ(j.at("source"), "searched");
  EXPECT_EQ(j.at("reason"), r.reason);
  EXPECT_EQ(j.at("winner"), "blocked_4x8");
  EXPECT_EQ(j.at("winner_index"), 1);
  EXPECT_EQ(j.at("default"), "naive");
  EXPECT_EQ(j.at("default_index"), 0);
  EXPECT_DOUBLE_EQ(j.at("winner_score").get<double>(), r.winner_score);
  EXPECT_DOUBLE_EQ(j.at("default_score").get<double>(), r.default_score);
  EXPECT_DOUBLE_EQ(j.at("speedup").get<double>(), r.speedup);
  EXPECT_EQ(j.at("statistic"), "min");
  EXPECT_DOUBLE_EQ(j.at("tie_band").get<double>(), r.tie_band);
  EXPECT_EQ(j.at("numerics_policy"), "bitwise");
  EXPECT_DOUBLE_EQ(j.at("seconds_validating").get<double>(), r.seconds_validating);
  EXPECT_DOUBLE_EQ(j.at("seconds_measuring").get<double>(), r.seconds_measuring);
  EXPECT_DOUBLE_EQ(j.at("seconds_settling").get<double>(), r.seconds_settling);
  EXPECT_DOUBLE_EQ(j.at("seconds_total").get<double>(), r.seconds_total);

  ASSERT_EQ(j.at("candidates").size(), r.candidates.size());
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateReport& c = r.candidates[i];
    const json& jc = j.at("candidates")[i];
    EXPECT_EQ(jc.at("index"), c.index);
    EXPECT_EQ(jc.at("name"), c.name);
    EXPECT_EQ(jc.at("status"), std::string(to_string(c.outcome.status)));
    EXPECT_EQ(jc.at("message"), c.outcome.message);
    EXPECT_EQ(jc.at("config"), c.config);
    EXPECT_EQ(jc.at("numerics"), "reassociates");
    EXPECT_EQ(jc.at("group"), c.group);
    EXPECT_EQ(jc.at("preference"), c.preference);
    EXPECT_EQ(jc.at("is_default"), c.is_default);
    EXPECT_EQ(jc.at("winner"), c.winner);
    EXPECT_EQ(jc.at("retries"), c.retries);
    EXPECT_DOUBLE_EQ(jc.at("score").get<double>(), c.score);
    EXPECT_DOUBLE_EQ(jc.at("vs_default").get<double>(), c.vs_default);
    if (!c.timing) {
      EXPECT_TRUE(jc.at("timing").is_null());
      continue;
    }
    const TimingResult& t = *c.timing;
    const json& jt = jc.at("timing");
    EXPECT_EQ(jt.at("status"), "ok");
    EXPECT_EQ(jt.at("message"), "");
    EXPECT_EQ(jt.at("mode"), "queued");
    EXPECT_EQ(jt.at("clock"), "steady_clock");
    EXPECT_EQ(jt.at("samples").get<std::vector<double>>(), t.samples);
    for (const auto& [name, value] : {std::pair{"min", t.min},
                                      {"median", t.median},
                                      {"mean", t.mean},
                                      {"mad", t.mad},
                                      {"p10", t.p10},
                                      {"p90", t.p90},
                                      {"stalled_fraction", t.stalled_fraction},
                                      {"wall_seconds", t.wall_seconds}}) {
      EXPECT_DOUBLE_EQ(jt.at(name).get<double>(), value) << name;
    }
    EXPECT_EQ(jt.at("depth"), t.depth);
    EXPECT_EQ(jt.at("dispatches"), t.dispatches);
    EXPECT_EQ(jt.at("contended"), t.contended);
  }
}

TEST(JsonReporter, ConfigIsAlsoGivenAsTypedParams) {
  const json j = json::parse(to_json(sample_report()));
  const json& params = j.at("candidates")[1].at("params");
  EXPECT_EQ(params.at("mc"), 64);
  EXPECT_EQ(params.at("order"), "ikj");
}

TEST(JsonReporter, WinnerIsPresentWithoutCandidates) {
  TuneReport r;
  r.op = "sum";
  r.source = Source::use_default;
  r.winner_name = "scalar";
  r.default_name = "scalar";
  const json j = json::parse(to_json(r));
  EXPECT_EQ(j.at("winner"), "scalar");
  EXPECT_EQ(j.at("source"), "default");
  EXPECT_TRUE(j.at("candidates").is_array());
  EXPECT_TRUE(j.at("candidates").empty());
}

TEST(JsonReporter, HostileTextStaysValidJson) {
  TuneReport r = sample_report();
  r.candidates[2].outcome.message = "log: \"quoted\"\n\ttab \xff\xfe bytes";
  r.candidates[0].timing->samples.push_back(std::numeric_limits<double>::quiet_NaN());
  const json j = json::parse(to_json(r));
  EXPECT_NE(j.at("candidates")[2].at("message").get<std::string>().find("\"quoted\""),
            std::string::npos);
  EXPECT_TRUE(j.at("candidates")[0].at("timing").at("samples").back().is_null());
}

TEST(JsonReporter, WriterMatchesToJsonAndIndentZeroIsOneLinePerObject) {
  const TuneReport r = sample_report();
  std::ostringstream out;
  make_reporter("json")->write(r, out);
  EXPECT_EQ(json::parse(out.str()), json::parse(to_json(r)));
  EXPECT_EQ(to_json(r, -1).find('\n'), std::string::npos);
}

// The console reporter's text for a report.
std::string text_of(const TuneReport& report) {
  std::ostringstream out;
  make_reporter("console")->write(report, out);
  return out.str();
}

TEST(ConsoleReporter, ShowsHeaderCandidatesAndMarkers) {
  std::ostringstream out;
  make_reporter("console")->write(sample_report(), out);
  const std::string text = out.str();
  for (const char* expected :
       {"sgemm", "m=256,n=256,k=256", "Test CPU 9000", "searched", "naive", "blocked_4x8",
        "avx_broken", "validation_failed", "element 3: got nan", "2.00×", "1.00 ms", "2.00 ms",
        "min", "tie band 3.0 %", "retried 1×", "* winner", "settling"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in\n"
                                                      << text;
  }
  // The winner's row carries the marker and comes first (ranked rows, fastest first), the
  // default's row its own marker, the failed row last.
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  // A table row starts with its marker column, then the name.
  const auto row_of = [&lines](const std::string& name) {
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(name + "  ") <= 4) return i;
    return lines.size();
  };
  const std::size_t winner = row_of("blocked_4x8"), naive = row_of("naive");
  const std::size_t broken = row_of("avx_broken");
  ASSERT_LT(broken, lines.size()) << text;
  EXPECT_EQ(lines[winner].front(), '*') << text;
  EXPECT_EQ(lines[naive].front(), 'd') << text;
  EXPECT_EQ(lines[broken].front(), ' ') << text;
  EXPECT_LT(winner, naive);
  EXPECT_LT(naive, broken);
}

TEST(ConsoleReporter, AnOkCandidateWithoutItsCheckedCallsSaysSo) {
  TuneReport r = sample_report();
  // No candidate checked (check_calls 0): no note.
  EXPECT_EQ(text_of(r).find("not checked"), std::string::npos);
  r.candidates[1].checked = true;  // the winner checked, the default behind it not
  const std::string text = text_of(r);
  const std::size_t note = text.find("not checked (behind)");
  ASSERT_NE(note, std::string::npos) << text;
  EXPECT_EQ(text.find("not checked", note + 1), std::string::npos) << "one row only:\n" << text;
  const std::size_t line = text.rfind('\n', note) + 1;
  EXPECT_NE(text.substr(line, note - line).find("naive"), std::string::npos) << text;
  EXPECT_TRUE(json::parse(to_json(r)).at("candidates")[1].at("checked").get<bool>());
}

TEST(ConsoleReporter, SaysWhereTheHostRanTheCpusAndWhetherItMovedThem) {
  TuneReport r = sample_report();
  EXPECT_EQ(text_of(r).find("cross-CPU"), std::string::npos);  // not measured: no line
  r.cpu_placement = {61, 64};
  std::string text = text_of(r);
  EXPECT_NE(text.find("CPUs       cross-CPU round trip 61 ns before the search, 64 ns after"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("moved the CPUs"), std::string::npos) << text;
  r.cpu_placement = {340, 61};
  text = text_of(r);
  EXPECT_NE(text.find("the host moved the CPUs during the search"), std::string::npos) << text;
  const json j = json::parse(to_json(r));
  EXPECT_DOUBLE_EQ(j.at("search").at("cpu_placement").at("before_ns").get<double>(), 340);
  EXPECT_DOUBLE_EQ(j.at("search").at("cpu_placement").at("after_ns").get<double>(), 61);
  // A far spell during the search, waited out: no move, and what the wait cost.
  r.cpu_placement = {
      .before_ns = 61, .after_ns = 64, .lowest_ns = 55, .waits = 1, .waited_seconds = 0.212};
  text = text_of(r);
  EXPECT_NE(text.find("61 ns before the search, 64 ns after, 55 ns at the lowest; waited 212 ms "
                      "for the CPUs to be near again (1 time)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("moved the CPUs"), std::string::npos) << text;
  r.cpu_placement.ran_far = 1;  // the wait ended with them apart
  EXPECT_NE(text_of(r).find("the host moved the CPUs during the search"), std::string::npos);
}

TEST(ConsoleReporter, NoCandidatesSaysSo) {
  TuneReport r;
  r.op = "sum";
  r.key = "n=16";
  r.source = Source::use_default;
  r.reason = "mode off";
  r.winner_name = "scalar";
  r.default_name = "scalar";
  std::ostringstream out;
  make_reporter("console")->write(r, out);
  EXPECT_NE(out.str().find("default (mode off)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("scalar  (the default)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("none measured"), std::string::npos) << out.str();
}

TEST(ConsoleReporter, LongMessagesAreClippedToOneLine) {
  TuneReport r = sample_report();
  r.candidates[2].outcome.message = std::string(500, 'x') + "\nsecond line";
  std::ostringstream out;
  make_reporter("console")->write(r, out);
  EXPECT_EQ(out.str().find("second line"), std::string::npos);
  EXPECT_NE(out.str().find(std::string(detail::ConsoleReporter::kMessageWidth - 1, 'x') + "…"),
            std::string::npos);
  EXPECT_EQ(out.str().find(std::string(detail::ConsoleReporter::kMessageWidth, 'x')),
            std::string::npos);
}

// What a planted KT file, store or artifact could carry in every string the table prints.
TuneReport hostile_report() {
  TuneReport r = sample_report();
  const std::string esc = "\x1b[2J\x1b]0;owned\x07";
  for (std::string* s : {&r.op, &r.key, &r.device, &r.reason, &r.winner_name, &r.default_name})
    *s += esc;
  for (CandidateReport& c : r.candidates) c.name += esc;
  r.candidates[2].outcome.message = "bad\x1b[31m red \xe2\x80\xae";
  return r;
}

TEST(ConsoleReporter, OutsideStringsAreEscapedNotObeyed) {
  std::ostringstream out;
  make_reporter("console")->write(hostile_report(), out);
  const std::string text = out.str();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos) << text;
  EXPECT_NE(text.find("sgemm\\x1b[2J"), std::string::npos) << text;
  EXPECT_NE(text.find("Test CPU 9000\\x1b"), std::string::npos) << text;
  EXPECT_NE(text.find("bad\\x1b[31m red \\u{202e}"), std::string::npos) << text;
}

TEST(JsonReporter, ControlCharactersAreEscapedByTheJsonWriter) {
  const std::string text = to_json(hostile_report());
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("\\u001b"), std::string::npos);
  EXPECT_EQ(json::parse(text).at("op").get<std::string>(), hostile_report().op);
}

TEST(Clip, EscapesControlCharacters) {
  EXPECT_EQ(detail::clip("a\x1b[1mb", 20), "a\\x1b[1mb");
}

TEST(FormatSeconds, PicksAUnitWithThreeSignificantDigits) {
  EXPECT_EQ(detail::format_seconds(12.3e-9), "12.3 ns");
  EXPECT_EQ(detail::format_seconds(812e-9), "812 ns");
  EXPECT_EQ(detail::format_seconds(999.7e-9), "1.00 µs");
  EXPECT_EQ(detail::format_seconds(4.561e-6), "4.56 µs");
  EXPECT_EQ(detail::format_seconds(1.234e-3), "1.23 ms");
  EXPECT_EQ(detail::format_seconds(2.5), "2.50 s");
  EXPECT_EQ(detail::format_seconds(4000.0), "4000 s");
  EXPECT_EQ(detail::format_seconds(0), "0 s");
  EXPECT_EQ(detail::format_seconds(-1), "-");
  EXPECT_EQ(detail::format_seconds(std::nan("")), "-");
}

TEST(Clip, CutsOnCodePointsAndKeepsOneLine) {
  EXPECT_EQ(detail::clip("short", 10), "short");
  EXPECT_EQ(detail::clip("abcdefghij", 5), "abcd…");
  EXPECT_EQ(detail::clip("µµµµµµ", 4), "µµµ…");
  EXPECT_EQ(detail::clip("one\ntwo", 10), "one");
  EXPECT_EQ(detail::clip("a\tb", 10), "a b");
  EXPECT_EQ(detail::display_width("1.23 µs"), 7u);
}

TEST(MakeReporter, KnownNamesAndUnknownNameIsAUsageErrorListingThem) {
  EXPECT_EQ(reporter_names(), (std::vector<std::string>{"console", "json", "html"}));
  EXPECT_NE(make_reporter("console"), nullptr);
  EXPECT_NE(make_reporter("json"), nullptr);
  try {
    make_reporter("xml");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("xml"), std::string::npos) << what;
    EXPECT_NE(what.find("console"), std::string::npos) << what;
    EXPECT_NE(what.find("json"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tunekit
