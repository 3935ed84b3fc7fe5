// The logging seam (include/tunekit/log.hpp, src/core/log.cpp): levels, TUNEKIT_LOG, the
// stream and function loggers, and what the tuner says at each level.
#include "tunekit/log.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fakes/fake_device.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

auto env_with(const char* log) {
  return [log](const char* name) -> const char* {
    return std::string_view(name) == "TUNEKIT_LOG" ? log : nullptr;
  };
}

TEST(LogLevels, ParseTheFourNamesAndNothingElse) {
  EXPECT_EQ(log_level_from_string("error"), LogLevel::error);
  EXPECT_EQ(log_level_from_string("warn"), LogLevel::warn);
  EXPECT_EQ(log_level_from_string("warning"), LogLevel::warn);
  EXPECT_EQ(log_level_from_string("info"), LogLevel::info);
  EXPECT_EQ(log_level_from_string("debug"), LogLevel::debug);
  for (const char* bad : {"", "WARN", "verbose", "3", "debug ", "inf"})
    EXPECT_EQ(log_level_from_string(bad), std::nullopt) << bad;
  for (LogLevel l : {LogLevel::error, LogLevel::warn, LogLevel::info, LogLevel::debug})
    EXPECT_EQ(log_level_from_string(to_string(l)), l);
}

TEST(LogLevels, TheEnvironmentIsReadThroughTheGivenGetenv) {
  EXPECT_EQ(log_level_from_environment(env_with(nullptr)), std::nullopt);
  EXPECT_EQ(log_level_from_environment(env_with("")), std::nullopt);
  EXPECT_EQ(log_level_from_environment(env_with("debug")), LogLevel::debug);
  try {
    log_level_from_environment(env_with("loud\x1b[2J"));
    FAIL() << "a bad TUNEKIT_LOG was accepted";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("TUNEKIT_LOG"), std::string::npos) << what;
    EXPECT_NE(what.find("error, warn, info or debug"), std::string::npos) << what;
    EXPECT_EQ(what.find('\x1b'), std::string::npos) << "raw escape reached the message";
  }
}

TEST(StreamLogger, WritesLevelledLinesAtOrUnderItsThreshold) {
  std::ostringstream out;
  const Log log(make_stream_logger(out, LogLevel::info));
  log.error("e");
  log.warn("w");
  log.info("i");
  log.debug("d");
  EXPECT_EQ(out.str(), "tunekit: error: e\ntunekit: warning: w\ntunekit: i\n");
  EXPECT_TRUE(log.enabled(LogLevel::info));
  EXPECT_FALSE(log.enabled(LogLevel::debug));
}

TEST(StreamLogger, OutsideTextIsMadeTerminalSafeOnOneLine) {
  std::ostringstream out;
  const Log log(make_stream_logger(out, LogLevel::warn));
  log.warn("name\x1b]0;owned\x07 and\nnext");
  const std::string text = out.str();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

TEST(StreamLogger, LinesOfThreadsNeverInterleave) {
  std::ostringstream out;
  const Log log(make_stream_logger(out, LogLevel::info));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 200; ++i) log.info(std::string(40, static_cast<char>('a' + t)));
    });
  for (auto& t : threads) t.join();
  std::istringstream lines(out.str());
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    ASSERT_EQ(line.size(), std::string("tunekit: ").size() + 40) << line;
    EXPECT_EQ(line.find_first_not_of(line.back(), 9), std::string::npos) << line;
  }
  EXPECT_EQ(count, 800);
}

TEST(Log, AnEmptyLogDropsEverythingAndBuildsNothing) {
  const Log log;
  EXPECT_FALSE(log);
  EXPECT_FALSE(log.enabled(LogLevel::error));
  bool built = false;
  log.lazy(LogLevel::error, [&] {
    built = true;
    return std::string("x");
  });
  EXPECT_FALSE(built);
  log.warn("dropped");  // no crash, nowhere to go
  EXPECT_FALSE(log.warning_sink());
}

TEST(Log, LazyTextIsBuiltOnlyWhenItsLevelShows) {
  std::vector<std::string> got;
  const Log log(make_function_logger(LogLevel::info, [&](LogLevel level, std::string_view m) {
    got.push_back(std::string(to_string(level)) + ":" + std::string(m));
  }));
  int built = 0;
  auto make = [&] {
    ++built;
    return std::string("text");
  };
  log.lazy(LogLevel::debug, make);
  log.lazy(LogLevel::info, make);
  EXPECT_EQ(built, 1);
  EXPECT_EQ(got, std::vector<std::string>{"info:text"});
}

TEST(Log, AFunctionLoggerCallbackMayLogAgain) {
  std::vector<std::string> got;
  std::shared_ptr<Logger> logger;
  logger = make_function_logger(LogLevel::info, [&](LogLevel, std::string_view m) {
    got.emplace_back(m);
    if (m == "outer") logger->write(LogLevel::info, "inner");  // re-entered on this thread
  });
  Log(logger).info("outer");
  EXPECT_EQ(got, (std::vector<std::string>{"outer", "inner"}));
}

TEST(Log, WarningsToAndWarningSinkCarryWarningsOnly) {
  std::vector<std::string> got;
  const Log log = Log::warnings_to([&](std::string_view m) { got.emplace_back(m); });
  log.info("not a warning");
  log.debug("nor this");
  log.warn("w1");
  log.error("e1");
  log.warning_sink()("w2");
  EXPECT_EQ(got, (std::vector<std::string>{"w1", "e1", "w2"}));
}

TEST(LogFromEnvironment, TunerOptionsTakeTheLevelOfTunekitLog) {
  EXPECT_TRUE(TunerOptions::from_environment(env_with(nullptr)).hooks.log.enabled(LogLevel::warn));
  EXPECT_FALSE(TunerOptions::from_environment(env_with(nullptr)).hooks.log.enabled(LogLevel::info));
  EXPECT_TRUE(TunerOptions::from_environment(env_with("debug")).hooks.log.enabled(LogLevel::debug));
  EXPECT_FALSE(TunerOptions::from_environment(env_with("error")).hooks.log.enabled(LogLevel::warn));
  EXPECT_THROW(TunerOptions::from_environment(env_with("chatty")), UsageError);
}

// What the tuner says: one info line per answer it finds (not per table hit), each
// candidate and the paired confirmation's sizing at debug.
TEST(TunerLog, SaysWhatItSearchedAndEachCandidateAtDebug) {
  fakes::FakeDevice dev;
  dev.behaviour["def"].seconds = 2e-3;
  dev.behaviour["fast"].seconds = 1e-3;
  auto op = fakes::make_fake_op(dev, {"def", "fast"}, "def");
  std::vector<std::pair<LogLevel, std::string>> got;
  TunerOptions o;
  o.persist.store = "none";
  o.hooks.log = Log(make_function_logger(LogLevel::debug, [&](LogLevel l, std::string_view m) {
    got.emplace_back(l, std::string(m));
  }));
  Tuner tuner(dev, o);
  ASSERT_EQ(tuner.select(*op, Key{{"n", 4}}).source, Source::searched);
  // The paired confirmation's sizing (during the search), then the answer, then each candidate.
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].first, LogLevel::debug);
  EXPECT_NE(got[0].second.find("paired confirmation of fast against def: ratio 0.5"),
            std::string::npos)
      << got[0].second;
  EXPECT_NE(got[0].second.find(": 10 pairs"), std::string::npos) << got[0].second;
  EXPECT_EQ(got[1].first, LogLevel::info);
  EXPECT_NE(got[1].second.find("n=4: searched 2 of 2 candidates"), std::string::npos)
      << got[1].second;
  EXPECT_NE(got[1].second.find("fast wins"), std::string::npos) << got[1].second;
  EXPECT_EQ(got[2].first, LogLevel::debug);
  EXPECT_NE(got[2].second.find("candidate def"), std::string::npos) << got[2].second;
  EXPECT_NE(got[3].second.find("candidate fast"), std::string::npos) << got[3].second;
  got.clear();
  tuner.select(*op, Key{{"n", 4}});  // a table hit: silent
  EXPECT_TRUE(got.empty()) << got.front().second;
}

TEST(TunerLog, AtWarnTheTunerSaysNothingOfASearch) {
  fakes::FakeDevice dev;
  auto op = fakes::make_fake_op(dev, {"def", "fast"}, "def");
  std::vector<std::string> got;
  TunerOptions o;
  o.persist.store = "none";
  o.hooks.log = Log::warnings_to([&](std::string_view m) { got.emplace_back(m); });
  Tuner tuner(dev, o);
  tuner.select(*op, Key{{"n", 4}});
  EXPECT_TRUE(got.empty()) << got.front();
}

}  // namespace
}  // namespace tunekit
