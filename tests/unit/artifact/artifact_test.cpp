// Tests for src/artifact/artifact.cpp and the tuner's artifact lookup.
#include "tunekit/artifact.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "fakes/fake_device.hpp"
#include "fakes/hostile_files.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

using testing::error_within;
class Artifacts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tunekit-artifacts-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    dev_.behaviour["def"].seconds = 2e-3;
    dev_.behaviour["fast"].seconds = 1e-3;
    op_ = std::make_unique<Op<fakes::FakeArgs>>("fake", 1);
    auto write = [this](std::string name) {
      return [this, name](fakes::FakeArgs& a) {
        dev_.running = name;
        for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
      };
    };
    op_->inputs([](const Key& k) { return fakes::FakeArgs{std::vector<float>(k.integer("n"))}; })
        .outputs([](fakes::FakeArgs& a) { return std::vector<OutputView>{OutputView::of(a.out)}; })
        .candidate(Candidate{.name = "def", .config = {{"vec", 1}}}, write("def"))
        .candidate(Candidate{.name = "fast",
                             .config = {{"vec", 8}, {"unroll", true}, {"tile", "64"}, {"f", 0.5}}},
                   write("fast"))
        .default_candidate("def");
  }
  void TearDown() override { fs::remove_all(dir_); }

  TunerOptions options(std::vector<std::string>* warnings = nullptr) {
    TunerOptions o;
    o.persist.artifact_dir = dir_.string();
    o.hooks.log = Log::warnings_to([warnings](std::string_view m) {
      if (warnings) {
        warnings->emplace_back(m);
      } else {
        ADD_FAILURE() << m;
      }
    });
    return o;
  }

  Artifact fast_artifact(const Key& key) {
    return make_artifact(*op_, key, dev_.identity(), "fast");
  }

  // Writes raw text where the artifact for `key` would be looked up.
  fs::path plant(const Key& key, const std::string& text) {
    fs::create_directories(dir_);
    fs::path p = dir_ / fast_artifact(key).file_name();
    std::ofstream(p) << text;
    return p;
  }

  void expect_skipped(const Key& key, const std::string& why, const std::string& says = "") {
    std::vector<std::string> warnings;
    Tuner t(dev_, options(&warnings));
    TuneReport r;
    // Bounded: an artifact path that blocks (a FIFO) must fail this test, not hang it.
    Tuner* tuner = &t;
    OpBase* op = op_.get();
    TuneReport* report = &r;
    ASSERT_EQ(error_within(std::chrono::seconds(20), [=] { tuner->select(*op, key, report); }), "")
        << why << ": select() blocked or threw";
    EXPECT_EQ(r.source, Source::searched) << why;
    ASSERT_EQ(warnings.size(), 1u) << why;
    EXPECT_NE(warnings[0].find(dir_.string()), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find(says), std::string::npos) << warnings[0];
  }
  fs::path artifact_path(const Key& key) {
    fs::create_directories(dir_);
    return dir_ / fast_artifact(key).file_name();
  }

  fs::path dir_;
  fakes::FakeDevice dev_;
  std::unique_ptr<Op<fakes::FakeArgs>> op_;
};

TEST_F(Artifacts, RoundTripKeepsJsonTypesAndIsServed) {
  Key key{{"n", 4}};
  std::string path = write_artifact(dir_.string(), fast_artifact(key));
  EXPECT_EQ(fs::path(path).filename().string(),
            "fake-" + fast_artifact(key).identity_digest().hex() + ".json");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  Artifact back = Artifact::parse(text);
  EXPECT_TRUE(back.config["vec"].is_integer());
  EXPECT_TRUE(back.config["unroll"].is_boolean());
  EXPECT_TRUE(back.config["tile"].is_string());  // "64" stays a string
  EXPECT_TRUE(back.config["f"].is_real());
  EXPECT_EQ(back.key, key);
  for (const auto& entry : fs::directory_iterator(dir_))  // no temp file left behind
    EXPECT_EQ(entry.path().extension(), ".json") << entry.path();

  Tuner t(dev_, options());
  TuneReport r;
  Choice c = t.select(*op_, key, &r);
  EXPECT_EQ(c.source, Source::artifact_replay);
  EXPECT_EQ(r.winner_name, "fast");
}

TEST_F(Artifacts, EvidenceAndSearchRecordRoundTripTyped) {
  CandidateReport fast;
  fast.index = 1;
  fast.name = "fast";
  fast.score = 1e-3;
  fast.timing = TimingResult{};
  fast.timing->samples = {1e-3, 1.1e-3};
  CandidateReport def;
  def.name = "def";
  def.outcome = Outcome{Status::validation_failed, "off by one"};
  SearchRecord search;
  search.strategy = "exhaustive";
  search.seed = 42;
  const Artifact a =
      make_artifact(*op_, Key{{"n", 4}}, dev_.identity(), "fast", {def, fast}, search);
  const Artifact back = Artifact::parse(a.to_json());
  ASSERT_EQ(back.evidence.size(), 2u);
  EXPECT_EQ(back.evidence[0].outcome.status, Status::validation_failed);
  EXPECT_EQ(back.evidence[0].outcome.message, "off by one");
  EXPECT_EQ(back.evidence[1].index, 1u);
  ASSERT_TRUE(back.evidence[1].timing.has_value());
  EXPECT_EQ(back.evidence[1].timing->samples, fast.timing->samples);
  ASSERT_TRUE(back.search.has_value());
  EXPECT_EQ(back.search->strategy, "exhaustive");
  EXPECT_EQ(back.search->seed, 42u);
  // The file keeps its format: {"search", "candidates"} with a search, else a bare array.
  const auto j = nlohmann::json::parse(a.to_json());
  EXPECT_EQ(j.at("evidence").at("candidates").size(), 2u);
  EXPECT_TRUE(
      nlohmann::json::parse(fast_artifact(Key{{"n", 4}}).to_json()).at("evidence").is_array());
  // An older artifact's bare array reads, without a search record.
  auto old = j;
  old["evidence"] = j.at("evidence").at("candidates");
  const Artifact from_old = Artifact::parse(old.dump());
  EXPECT_EQ(from_old.evidence.size(), 2u);
  EXPECT_FALSE(from_old.search.has_value());
}

TEST_F(Artifacts, BadArtifactsAreSkippedWithAWarning) {
  Key key{{"n", 4}};
  plant(key, "{ this is not json");
  expect_skipped(key, "malformed JSON");

  nlohmann::json j = nlohmann::json::parse(fast_artifact(key).to_json());
  j["identity"]["device"]["compute_units"] = "2";
  plant(key, j.dump());
  expect_skipped(key, "wrong type");

  Artifact other_device = fast_artifact(key);
  other_device.product = "another device";
  plant(key, other_device.to_json());
  expect_skipped(key, "wrong device");

  Artifact other_key = fast_artifact(key);
  other_key.key = Key{{"n", 5}};
  plant(key, other_key.to_json());
  expect_skipped(key, "wrong key");

  Artifact unknown = fast_artifact(key);
  unknown.candidate = "vanished";
  plant(key, unknown.to_json());
  expect_skipped(key, "unknown candidate");

  Artifact disagrees = fast_artifact(key);
  disagrees.config.set("vec", 16);  // the op declares vec=8 for "fast": the op wins
  plant(key, disagrees.to_json());
  expect_skipped(key, "parameter disagrees");

  nlohmann::json traversal = nlohmann::json::parse(fast_artifact(key).to_json());
  traversal["identity"]["name"] = "../fake";
  plant(key, traversal.dump());
  expect_skipped(key, "path traversal in name");
}

TEST_F(Artifacts, KeyAxesInTheArtifactNeverOverrideTheKey) {
  Key key{{"n", 4}};
  Artifact a = fast_artifact(key);
  a.config.set("n", 999);  // a key axis: ignored, the caller's key stands
  write_artifact(dir_.string(), a);
  Tuner t(dev_, options());
  EXPECT_EQ(t.select(*op_, key).source, Source::artifact_replay);
}

TEST_F(Artifacts, NamesWithPathSeparatorsAreRefused) {
  Artifact a = fast_artifact(Key{{"n", 1}});
  for (const char* bad : {"a/b", "..", "x..y", "a\\b", ""}) {
    a.name = bad;
    EXPECT_THROW(write_artifact(dir_.string(), a), UsageError) << bad;
  }
}

TEST_F(Artifacts, NoDeviceIdentityNoArtifact) {
  const_cast<DeviceIdentity&>(dev_.identity()).known = false;
  EXPECT_THROW(make_artifact(*op_, Key{{"n", 1}}, dev_.identity(), "fast"), UsageError);
  TunerOptions o = options();
  o.decide.mode = Mode::force;
  Tuner t(dev_, o);
  // Fails clearly (seed 002), caching nothing: no file, nothing published.
  EXPECT_THROW(t.select(*op_, Key{{"n", 1}}), UsageError);
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_FALSE(t.settled(*op_, Key{{"n", 1}}).has_value());
}

TEST_F(Artifacts, ForceModeSearchesAndWritesAnArtifact) {
  TunerOptions o = options();
  o.decide.mode = Mode::force;
  Key key{{"n", 6}};
  {
    Tuner t(dev_, o);
    EXPECT_EQ(t.select(*op_, key).source, Source::searched);
  }
  ASSERT_TRUE(fs::exists(dir_ / fast_artifact(key).file_name()));
  Tuner reader(dev_, options());
  EXPECT_EQ(reader.select(*op_, key).source, Source::artifact_replay);
}

TEST_F(Artifacts, PartialTempFilesAreNeverRead) {
  Key key{{"n", 4}};
  fs::create_directories(dir_);
  std::string full = fast_artifact(key).to_json();
  std::ofstream(dir_ / ("." + fast_artifact(key).file_name() + ".tmp-1")) << full.substr(0, 40);
  Tuner t(dev_, options());
  EXPECT_EQ(t.select(*op_, key).source, Source::searched);
}

TEST_F(Artifacts, AFifoAtTheArtifactPathIsSkippedWithoutBlocking) {
  Key key{{"n", 4}};
  ASSERT_EQ(::mkfifo(artifact_path(key).c_str(), 0600), 0);
  expect_skipped(key, "FIFO", "FIFO");
}

TEST_F(Artifacts, ASymlinkToADeviceIsSkippedNotReadForever) {
  Key key{{"n", 4}};
  fs::create_symlink("/dev/zero", artifact_path(key));
  expect_skipped(key, "symlink to /dev/zero", "character device");
}

TEST_F(Artifacts, ADirectoryAtTheArtifactPathIsSkipped) {
  Key key{{"n", 4}};
  fs::create_directories(artifact_path(key));
  expect_skipped(key, "directory", "directory");
}

TEST_F(Artifacts, AnOversizeArtifactIsSkippedNamingSizeAndCap) {
  Key key{{"n", 4}};
  std::string big = fast_artifact(key).to_json();
  big.insert(big.size() - 2, std::string(kArtifactMaxBytes, ' '));  // valid JSON, too big
  std::ofstream(artifact_path(key)) << big;
  expect_skipped(key, "oversize", std::to_string(kArtifactMaxBytes));
}

TEST_F(Artifacts, ATruncatedArtifactIsSkipped) {
  Key key{{"n", 4}};
  const std::string whole = fast_artifact(key).to_json();
  plant(key, whole.substr(0, whole.size() / 2));
  expect_skipped(key, "truncated", "not valid JSON");
}

TEST_F(Artifacts, ThePlantedTextInASkipWarningIsEscapedForTheTerminal) {
  Key key{{"n", 4}};
  Artifact other = fast_artifact(key);
  other.product = "evil\x1b]0;owned\x07\x1b[2J";
  plant(key, other.to_json());
  expect_skipped(key, "another device", "evil\\x1b]0;owned\\x07\\x1b[2J");
}

TEST_F(Artifacts, ReadArtifactRefusesWhatIsNotARegularFile) {
  Key key{{"n", 4}};
  const std::string path = write_artifact(dir_.string(), fast_artifact(key));
  EXPECT_EQ(read_artifact(path).candidate, "fast");
  ASSERT_EQ(::mkfifo((dir_ / "fifo.json").c_str(), 0600), 0);
  const fs::path fifo = dir_ / "fifo.json";
  EXPECT_NE(error_within(std::chrono::seconds(20), [fifo] { read_artifact(fifo); }).find("FIFO"),
            std::string::npos);
  EXPECT_THROW(read_artifact("/dev/null"), UsageError);
  std::ofstream(dir_ / "half.json") << testing::file_text(path).substr(0, 30);
  EXPECT_THROW(read_artifact(dir_ / "half.json"), ParseError);
}

TEST_F(Artifacts, WritesArePrivate) {
  Key key{{"n", 4}};
  const std::string path = write_artifact((dir_ / "new" / "dir").string(), fast_artifact(key));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir_ / "new").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(Artifacts, TheWriterNeverFollowsOrReplacesASymlinkFifoOrDevice) {
  Key key{{"n", 4}};
  const fs::path target = artifact_path(key);
  std::ofstream(dir_ / "victim") << "precious";
  fs::create_symlink(dir_ / "victim", target);
  EXPECT_THROW(write_artifact(dir_.string(), fast_artifact(key)), UsageError);
  EXPECT_EQ(testing::file_text(dir_ / "victim"), "precious");
  fs::remove(target);
  fs::create_symlink("/dev/full", target);
  EXPECT_THROW(write_artifact(dir_.string(), fast_artifact(key)), UsageError);
  EXPECT_TRUE(fs::is_symlink(target));
  fs::remove(target);
  ASSERT_EQ(::mkfifo(target.c_str(), 0600), 0);
  const Artifact a = fast_artifact(key);
  const std::string dir = dir_.string();
  EXPECT_NE(
      error_within(std::chrono::seconds(20), [a, dir] { write_artifact(dir, a); }).find("FIFO"),
      std::string::npos);
  EXPECT_TRUE(fs::is_fifo(target));
}

TEST_F(Artifacts, APlantedTempSymlinkIsNeverFollowed) {
  Key key{{"n", 4}};
  const fs::path target = artifact_path(key);
  std::ofstream(dir_ / "victim") << "precious";
  // The name the old writer used (.<file>.tmp-<pid>): anyone could plant it.
  fs::create_symlink(dir_ / "victim", dir_ / ("." + target.filename().string() + ".tmp-" +
                                              std::to_string(::getpid())));
  write_artifact(dir_.string(), fast_artifact(key));
  EXPECT_EQ(testing::file_text(dir_ / "victim"), "precious");
  EXPECT_EQ(read_artifact(target).candidate, "fast");
}

}  // namespace
}  // namespace tunekit
