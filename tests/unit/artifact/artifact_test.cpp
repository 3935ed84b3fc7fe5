// Tests for src/artifact/artifact.cpp and the tuner's artifact lookup.
#include "tunekit/artifact.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fakes/fake_device.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

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
    o.artifact_dir = dir_.string();
    o.on_warning = [warnings](std::string_view m) {
      if (warnings) {
        warnings->emplace_back(m);
      } else {
        ADD_FAILURE() << m;
      }
    };
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

  void expect_skipped(const Key& key, const std::string& why) {
    std::vector<std::string> warnings;
    Tuner t(dev_, options(&warnings));
    TuneReport r;
    t.select(*op_, key, &r);
    EXPECT_EQ(r.source, Source::searched) << why;
    ASSERT_EQ(warnings.size(), 1u) << why;
    EXPECT_NE(warnings[0].find(dir_.string()), std::string::npos) << warnings[0];
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
  o.mode = Mode::force;
  Tuner t(dev_, o);
  t.select(*op_, Key{{"n", 1}});
  EXPECT_FALSE(fs::exists(dir_));  // nothing cached
}

TEST_F(Artifacts, ForceModeSearchesAndWritesAnArtifact) {
  TunerOptions o = options();
  o.mode = Mode::force;
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

}  // namespace
}  // namespace tunekit
