// Tests src/report/console_store_sync.cpp and json_store_sync.cpp: what `cache push` and
// `cache pull` print, console and JSON; the html reporter refuses the summary.
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tunekit/errors.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/store_sync.hpp"

namespace tunekit {
namespace {

StoreSyncSummary sync_summary_sample() {
  StoreSyncSummary s;
  s.from = "sqlite:/home/u/.cache/tunekit/choices.db";
  s.to = "postgresql://tuner:***@db/tunekit";
  s.entries = {
      {"0123456789abcdef0123456789abcdef", "sum", "n=1000,dtype=f32", "kernel", SyncAction::copied,
       1700000000, 0, false},
      {"1123456789abcdef0123456789abcdef", "sgemm", "m=1\x1b[31m", "kernel", SyncAction::kept_newer,
       1700000000, 1700003600, true},
      {"2123456789abcdef0123456789abcdef", "sum", "n=2000,dtype=f32", "kernel",
       SyncAction::unchanged, 1700000000, 1700000000, false},
  };
  s.bans_copied = 2;
  s.pending_moved = 1;
  s.misses_moved = 3;
  return s;
}

std::string sync_written(const char* reporter, const StoreSyncSummary& s) {
  std::ostringstream out;
  make_reporter(reporter)->write(s, out);
  return out.str();
}

TEST(StoreSyncReporter, ConsoleListsWhatMovedOrWasKeptAndCountsTheRest) {
  const std::string text = sync_written("console", sync_summary_sample());
  EXPECT_NE(text.find("copied sqlite:/home/u/.cache/tunekit/choices.db -> "
                      "postgresql://tuner:***@db/tunekit"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kept, newer in target (2023-11-14T23:13:20Z; --force replaces it)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("n=2000"), std::string::npos) << "unchanged entries are only counted";
  EXPECT_NE(text.find("entries: 1 copied, 0 replaced, 1 unchanged, 1 kept (newer in target)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("bans: 2 copied, 0 already there"), std::string::npos) << text;
  EXPECT_NE(text.find("pending misses: 1 moved (3 misses)"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "a stored key is escaped for the terminal";
}

TEST(StoreSyncReporter, ConsoleSaysADryRunAndWhyPendingMissesStayed) {
  StoreSyncSummary s = sync_summary_sample();
  s.dry_run = true;
  s.pending_moved = 0;
  s.misses_moved = 0;
  s.pending_left = 2;
  s.pending_left_why = "the source is read-only (no write permission)";
  const std::string text = sync_written("console", s);
  EXPECT_EQ(text.rfind("dry run (nothing written): ", 0), 0u) << text;
  EXPECT_NE(text.find("would copy"), std::string::npos) << text;
  EXPECT_NE(text.find("entries: 1 would be copied"), std::string::npos) << text;
  EXPECT_NE(text.find("2 left in the source: the source is read-only"), std::string::npos) << text;
}

TEST(StoreSyncReporter, JsonHasTheCountsAndEveryEntrysAction) {
  StoreSyncSummary s = sync_summary_sample();
  s.entries[0].action = SyncAction::failed;
  const nlohmann::json j = nlohmann::json::parse(sync_written("json", s));
  EXPECT_FALSE(j.at("complete").get<bool>()) << "a failed entry: not complete";
  EXPECT_EQ(j.at("counts").at("failed"), 1);
  EXPECT_EQ(j.at("counts").at("kept_newer"), 1);
  EXPECT_EQ(j.at("bans").at("copied"), 2);
  EXPECT_EQ(j.at("pending").at("misses"), 3);
  ASSERT_EQ(j.at("entries").size(), 3u);
  EXPECT_EQ(j.at("entries")[1].at("action"), "kept_newer");
  EXPECT_EQ(j.at("entries")[1].at("target_created_at"), 1700003600);
  EXPECT_TRUE(j.at("entries")[1].at("stale").get<bool>());
  EXPECT_EQ(j.at("to"), "postgresql://tuner:***@db/tunekit");
}

TEST(StoreSyncReporter, HtmlHasNoPageForIt) {
  std::ostringstream out;
  EXPECT_THROW(make_reporter("html")->write(sync_summary_sample(), out), UsageError);
}

}  // namespace
}  // namespace tunekit
