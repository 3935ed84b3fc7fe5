// Tests for src/stack/stack_report.cpp: the report as text and as JSON.
#include "tunekit/stack_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "unit/stack/stack_test_support.hpp"

namespace tunekit::stack {
namespace {

StackReport tuned_report() {
  auto runner = test::make_runner();
  StackOptions o = test::options_with(runner);
  o.report_entries = 2;
  StackController c(o);
  Problem p = test::make_problem();
  p.depends_on = {Dependency{Scope::operator_, Digest::of("op"), Digest::of("set"), "blocked"}};
  const CandidateSet set = test::make_set({"slow", "fast"});
  (void)c.select(p, set);
  return *c.report(p, set);
}

TEST(StackReportText, SaysTheDecisionEachEntryTheCutAndTheDependencies) {
  std::ostringstream out;
  write_text(tuned_report(), out);
  const std::string text = out.str();
  EXPECT_NE(text.find("graph block"), std::string::npos) << text;
  EXPECT_NE(text.find("-> fast (tuned)"), std::string::npos) << text;
  EXPECT_NE(text.find("ratio 0.500 (MAD 0.0 %, 8 pairs)"), std::string::npos) << text;
  EXPECT_NE(text.find("(1 more entries not kept)"), std::string::npos) << text;
  EXPECT_NE(text.find("measured under operator"), std::string::npos) << text;
  EXPECT_NE(text.find("-> blocked"), std::string::npos) << text;
}

TEST(StackReportJson, CarriesEveryField) {
  const StackReport r = tuned_report();
  const nlohmann::json j = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(j["scope"], "graph");
  EXPECT_EQ(j["selected"], "fast");
  EXPECT_EQ(j["source"], "tuned");
  EXPECT_EQ(j["cache_key"], r.cache_key.hex());
  ASSERT_EQ(j["entries"].size(), 2u);
  EXPECT_EQ(j["entries"][1]["status"], "selected");
  EXPECT_DOUBLE_EQ(j["entries"][1]["ratio"].get<double>(), 0.5);
  EXPECT_EQ(j["entries_cut"], 1);
  EXPECT_EQ(j["dependencies"][0]["chosen"], "blocked");
}

}  // namespace
}  // namespace tunekit::stack
