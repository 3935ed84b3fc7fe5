// Tests src/report/console_stored_choices.cpp and json_stored_choices.cpp: what `cache ls`,
// `cache show` and `cache ls --pending` print, console and JSON; and ModelReport through the
// reporters.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tunekit/pending.hpp"
#include "tunekit/reporter.hpp"

namespace tunekit {
namespace {

using nlohmann::json;

StoredChoice stored() {
  StoredChoice c;
  c.identity_digest = "0123456789abcdef0123456789abcdef";
  c.op = "sum";
  c.key = "n=1000,dtype=f32";
  c.key_digest = "fedcba9876543210fedcba9876543210";
  c.device.backend = "cpu";
  c.device.product = "Test CPU 9000";
  c.device.compute_units = 2;
  c.device.memory_bytes = std::uint64_t{8} << 30;
  c.toolchain = {"0.3.0", "gcc 12.2.0", {"hwloc 2.9.0"}};
  c.environment = {{"power", "ac"}};
  c.numerics_policy = "reassociates";
  c.candidates = "cs";
  c.winner = "fast";
  c.winner_config = "mc=64";
  CandidateReport def;
  def.name = "naive";
  def.timing = TimingResult{};
  def.timing->samples = {3e-6, 1e-6, 2e-6};  // no stored statistics: from the samples
  CandidateReport fast;
  fast.index = 1;
  fast.name = "fast";
  fast.timing = TimingResult{};
  fast.timing->median = 1.5e-6;
  fast.timing->min = 1e-6;
  CandidateReport broken;
  broken.index = 2;
  broken.name = "broken";
  broken.outcome = Outcome{Status::validation_failed, "element 3 differs\nby 2"};
  c.evidence = {def, fast, broken};
  SearchRecord s;
  s.strategy = "auto";
  s.schedule = "full";
  s.seed = 7;
  s.space_size = 3;
  s.evaluated = 3;
  s.stop_reason = "space exhausted";
  c.search = s;
  c.created_at = 1700000000;  // 2023-11-14T22:13:20Z
  c.tunekit_version = "0.3.0";
  return c;
}

std::string write_console(const auto& what) {
  std::ostringstream out;
  make_reporter("console")->write(what, out);
  return out.str();
}

json write_json(const auto& what) {
  std::ostringstream out;
  make_reporter("json")->write(what, out);
  return json::parse(out.str());
}

bool contains_text(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StoredChoicesReporter, ConsoleListingIsOneLineEachWithTheStaleCounted) {
  StoredChoice old = stored();
  old.stale = "failed re-validation";
  old.budget_cut = true;
  const std::string text = write_console(StoredChoiceList{"sqlite:/s.db", "", "", {stored(), old}});
  EXPECT_TRUE(contains_text(text, "op   key               winner        created")) << text;
  EXPECT_TRUE(contains_text(text, "fast (stale)")) << text;
  EXPECT_TRUE(contains_text(text, "2023-11-14T22:13:20Z")) << text;
  EXPECT_TRUE(contains_text(text, "0123456789ab\n")) << "12 digits of the identity:\n" << text;
  EXPECT_TRUE(contains_text(text, "2 stored choices in sqlite:/s.db\n")) << text;
  EXPECT_TRUE(contains_text(text, "1 stale (kept as evidence, not served")) << text;
}

TEST(StoredChoicesReporter, ConsoleSaysWhenNothingIsStored) {
  EXPECT_EQ(write_console(StoredChoiceList{"sqlite:/s.db", "sum", "not writable by you", {}}),
            "the store sqlite:/s.db is empty for op sum (read-only: not writable by you)\n");
}

TEST(StoredChoicesReporter, ConsoleShowsAnEntryInFull) {
  const std::vector<StoredChoiceDetail> shown{
      {stored(), {BannedCandidate{"", "sum", "", "slow", "threw: bad_alloc", 1700000000}}}};
  const std::string text = write_console(shown);
  EXPECT_TRUE(contains_text(text, "sum  n=1000,dtype=f32\n")) << text;
  EXPECT_TRUE(contains_text(text, "winner       fast  (mc=64)")) << text;
  EXPECT_TRUE(contains_text(text, "Test CPU 9000 (cpu, 2 compute units, memory 8 GiB)")) << text;
  EXPECT_TRUE(contains_text(text, "tunekit 0.3.0, gcc 12.2.0, hwloc 2.9.0")) << text;
  EXPECT_TRUE(contains_text(text, "environment  power=ac")) << text;
  EXPECT_TRUE(contains_text(text, "banned: slow \u2014 threw: bad_alloc")) << text;
  EXPECT_TRUE(contains_text(text,
                            "search       auto / full, seed 7, 3 of 3 points, stopped by space "
                            "exhausted"))
      << text;
  EXPECT_TRUE(contains_text(text, "fast *")) << "the winner is marked:\n" << text;
  EXPECT_TRUE(contains_text(text, "2.00 µs")) << "the median from the samples:\n" << text;
  EXPECT_TRUE(contains_text(text, "1.50 µs")) << "the stored median:\n" << text;
  EXPECT_TRUE(contains_text(text, "element 3 differs by 2")) << "messages on one line:\n" << text;
  EXPECT_FALSE(contains_text(text, "stale")) << text;
}

TEST(StoredChoicesReporter, ConsoleShowsWhyAnEntryIsStaleAndWhenNothingWasMeasured) {
  StoredChoice c = stored();
  c.stale = "failed re-validation: validation_failed";
  c.evidence.clear();
  c.search.reset();
  const std::string text = write_console(std::vector<StoredChoiceDetail>{{c, {}}});
  EXPECT_TRUE(
      contains_text(text, "stale: failed re-validation: validation_failed  (kept as evidence"))
      << text;
  EXPECT_TRUE(contains_text(text, "evidence     (none stored)")) << text;
  EXPECT_FALSE(contains_text(text, "search ")) << text;
}

TEST(StoredChoicesReporter, ConsoleEscapesStoredText) {
  StoredChoice c = stored();
  c.winner = "win\x1b]0;pwned\x07";
  c.evidence[2].outcome.message = "\x1b[1A up";
  for (const std::string& text : {write_console(StoredChoiceList{"sqlite:/s.db", "", "", {c}}),
                                  write_console(std::vector<StoredChoiceDetail>{{c, {}}})}) {
    EXPECT_FALSE(contains_text(text, "\x1b")) << text;
    EXPECT_TRUE(contains_text(text, "\\x1b")) << text;
  }
}

TEST(StoredChoicesReporter, JsonHasEveryFieldTypedAndTheBans) {
  const json listed = write_json(StoredChoiceList{"sqlite:/s.db", "", "", {stored()}});
  ASSERT_TRUE(listed.is_array());
  ASSERT_EQ(listed.size(), 1u);
  const json& e = listed[0];
  EXPECT_EQ(e.at("identity_digest"), "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(e.at("device").at("product"), "Test CPU 9000");
  EXPECT_EQ(e.at("device").at("memory_bytes"), std::uint64_t{8} << 30);
  EXPECT_EQ(e.at("toolchain").at("runtimes").at(0), "hwloc 2.9.0");
  EXPECT_EQ(e.at("environment").at("power"), "ac");
  EXPECT_EQ(e.at("evidence").at("search").at("seed"), 7);
  EXPECT_EQ(e.at("evidence").at("candidates").size(), 3u);
  EXPECT_EQ(e.at("evidence").at("candidates").at(2).at("status"), "validation_failed");
  EXPECT_EQ(e.at("created"), "2023-11-14T22:13:20Z");
  EXPECT_EQ(e.at("stale"), "");
  EXPECT_FALSE(e.contains("bans")) << "the listing has no bans";

  const json shown = write_json(std::vector<StoredChoiceDetail>{
      {stored(), {BannedCandidate{"", "sum", "", "slow", "threw", 1700000000}}}});
  ASSERT_EQ(shown.at(0).at("bans").size(), 1u);
  EXPECT_EQ(shown.at(0).at("bans").at(0).at("candidate"), "slow");
  EXPECT_EQ(shown.at(0).at("bans").at(0).at("banned"), "2023-11-14T22:13:20Z");
}

PendingMiss pending() {
  PendingMiss m;
  m.identity_digest = "aaaabbbbccccddddeeeeffff00001111";
  m.op = "sum";
  m.key = "n=10";
  m.device = R"({"product":"Test CPU 9000"})";
  m.environment = "{}";
  m.count = 3;
  m.first_seen = 1700000000;
  m.last_seen = 1700000060;
  return m;
}

TEST(StoredChoicesReporter, PendingMissesConsoleAndJson) {
  const std::string text = write_console(PendingMissList{"sqlite:/s.db", "", {pending()}});
  EXPECT_TRUE(contains_text(text, "op   key   count  first seen")) << text;
  EXPECT_TRUE(contains_text(text, "Test CPU 9000  aaaabbbbcccc")) << text;
  EXPECT_TRUE(contains_text(text, "1 pending miss in sqlite:/s.db ('tunekit tune --pending'"))
      << text;
  EXPECT_EQ(write_console(PendingMissList{"sqlite:/s.db", "sum", {}}),
            "no pending misses in sqlite:/s.db for op sum\n");
  const json j = write_json(PendingMissList{"sqlite:/s.db", "", {pending()}});
  EXPECT_EQ(j.at(0).at("count"), 3);
  EXPECT_EQ(j.at(0).at("device").at("product"), "Test CPU 9000");
  EXPECT_EQ(j.at(0).at("last_seen"), "2023-11-14T22:14:20Z");
}

// `tune --model` and `explain` print a ModelReport through the reporters too.
TEST(ModelReportReporter, ConsoleAndJsonWriteTheModelReport) {
  ModelReport r;
  r.op = "sum";
  r.key = "n=10";
  r.device = "Test CPU 9000";
  std::ostringstream console, expected_console, json_out;
  make_reporter("console")->write(r, console);
  write_console(r, expected_console);
  EXPECT_EQ(console.str(), expected_console.str());
  make_reporter("json")->write(r, json_out);
  EXPECT_EQ(json_out.str(), to_json(r) + "\n");
  EXPECT_EQ(nlohmann::json::parse(json_out.str()).at("op"), "sum");
}

// `tune --pending`: a line per record as it is done, then the summary (or one JSON array).
TEST(StoredChoicesReporter, PendingOutcomesConsoleAndJson) {
  PendingOutcome tuned;
  tuned.miss = pending();
  tuned.report.winner_name = "fast";
  tuned.report.speedup = 2;
  tuned.report.budget.cut = true;
  PendingOutcome kept;
  kept.miss = pending();
  kept.status = PendingStatus::bad_key;
  kept.why = "n is not a number";
  PendingOutcome elsewhere = kept;
  elsewhere.status = PendingStatus::other_device;
  EXPECT_EQ(write_console(tuned),
            "tuned  sum  n=10  -> fast (2.00x over the default; budget cut)\n");
  EXPECT_EQ(write_console(kept), "kept   sum  n=10  bad_key: n is not a number\n");
  EXPECT_EQ(write_console(std::vector<PendingOutcome>{tuned, kept, elsewhere}),
            "1 of 3 pending misses tuned; 1 kept (see above); 1 left for the device that "
            "recorded them\n");
  std::ostringstream nothing;
  make_reporter("json")->write(tuned, nothing);
  EXPECT_EQ(nothing.str(), "") << "JSON is one document, written at the end";
  const json j = write_json(std::vector<PendingOutcome>{tuned, kept});
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j.at(0).at("status"), "tuned");
  EXPECT_EQ(j.at(0).at("report").at("winner"), "fast");
  EXPECT_EQ(j.at(1).at("why"), "n is not a number");
  EXPECT_FALSE(j.at(1).contains("report"));
}

}  // namespace
}  // namespace tunekit
