// src/model/device_profile.cpp: profile files round trip; malformed ones are clear errors
// naming the file and the field.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fakes/hostile_files.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/cost_model.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

DeviceProfile sample() {
  DeviceProfile p;
  p.backend = "cpu";
  p.vendor = "AuthenticAMD";
  p.product = "AMD EPYC";
  p.architecture = "x86_64";
  p.compute_units = 2;
  p.device_digest = "0123456789abcdef0123456789abcdef";
  p.envelope.peak_flops_1 = {57.5e9, 0.002};
  p.envelope.peak_flops_all = {110e9, 0.01};
  p.envelope.dram_bw_1 = {20e9, 0.016};
  p.envelope.dram_bw_all = {25e9, 0.2};
  p.envelope.cache_bw_1 = {41e9, 0.16};
  p.envelope.cache_bytes = {11.3 * 1024 * 1024, 0.19};
  p.envelope.launch_seconds = {12e-6, 0.01};
  p.envelope.threads = 2;
  p.envelope.simd_lanes = 8;
  p.envelope.fma_chains = 8;
  p.quick = true;
  p.calibration_seconds = 1.3;
  p.created_at = 1790000000;
  return p;
}

void expect_same(const Estimate& a, const Estimate& b) {
  EXPECT_DOUBLE_EQ(a.value, b.value);
  EXPECT_DOUBLE_EQ(a.spread, b.spread);
}

// The message of the UsageError parsing `text` throws ("" when it does not throw).
std::string error_of(const std::string& text) {
  try {
    DeviceProfile::parse(text, "p.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string with(const std::function<void(nlohmann::ordered_json&)>& edit) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(sample().to_json());
  edit(j);
  return j.dump();
}

TEST(DeviceProfile, RoundTripsThroughAFile) {
  const fs::path dir = fs::temp_directory_path() / ("tunekit-profile-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string path = profile_path((dir / "profiles").string(), sample().device_digest);
  EXPECT_EQ(fs::path(path).filename(), sample().device_digest + ".json");
  write_profile(path, sample());
  const DeviceProfile back = read_profile(path);
  const DeviceProfile p = sample();
  EXPECT_EQ(back.product, p.product);
  EXPECT_EQ(back.vendor, p.vendor);
  EXPECT_EQ(back.device_digest, p.device_digest);
  EXPECT_EQ(back.compute_units, 2);
  expect_same(back.envelope.peak_flops_1, p.envelope.peak_flops_1);
  expect_same(back.envelope.peak_flops_all, p.envelope.peak_flops_all);
  expect_same(back.envelope.dram_bw_1, p.envelope.dram_bw_1);
  expect_same(back.envelope.dram_bw_all, p.envelope.dram_bw_all);
  expect_same(back.envelope.cache_bw_1, p.envelope.cache_bw_1);
  expect_same(back.envelope.cache_bytes, p.envelope.cache_bytes);
  expect_same(back.envelope.launch_seconds, p.envelope.launch_seconds);
  EXPECT_EQ(back.envelope.fma_chains, 8);
  EXPECT_EQ(back.envelope.simd_lanes, 8);
  EXPECT_TRUE(back.quick);
  EXPECT_EQ(back.created_at, p.created_at);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  // No temp file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "profiles"), fs::directory_iterator()), 1);
  // A fixed temp name in the way (another writer's, or a leftover that is not a file) does
  // not stop a write: the temp name is this writer's own.
  fs::create_directories(path + ".tmp");
  write_profile(path, sample());
  EXPECT_EQ(read_profile(path).product, sample().product);
  fs::remove_all(dir);
}

TEST(DeviceProfile, NotJsonIsAParseErrorNamingTheFile) {
  try {
    DeviceProfile::parse("{\"format\": ", "broken.json");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(DeviceProfile, MissingFieldNamesTheField) {
  const std::string m = error_of(with([](auto& j) { j["envelope"].erase("dram_bw_all"); }));
  EXPECT_NE(m.find("p.json"), std::string::npos) << m;
  EXPECT_NE(m.find("'envelope.dram_bw_all' is missing"), std::string::npos) << m;
  EXPECT_NE(m.find("tunekit calibrate"), std::string::npos) << m;
}

TEST(DeviceProfile, WrongTypesAndHostileValuesAreRefused) {
  std::string m = error_of(with([](auto& j) { j["envelope"]["peak_flops_1"]["value"] = "fast"; }));
  EXPECT_NE(m.find("'envelope.peak_flops_1.value' must be a number"), std::string::npos) << m;
  m = error_of(with([](auto& j) { j["envelope"]["cache_bytes"]["value"] = -5; }));
  EXPECT_NE(m.find("'envelope.cache_bytes.value' must lie in"), std::string::npos) << m;
  m = error_of(with([](auto& j) { j["envelope"]["threads"] = 1.5; }));
  EXPECT_NE(m.find("'envelope.threads' must be an integer"), std::string::npos) << m;
  m = error_of(with([](auto& j) { j["envelope"]["fma_chains"] = 0; }));
  EXPECT_NE(m.find("'envelope.fma_chains' must lie in"), std::string::npos) << m;
  m = error_of(with([](auto& j) { j["device"] = 3; }));
  EXPECT_NE(m.find("'device' must be an object"), std::string::npos) << m;
  m = error_of(with([](auto& j) { j["format"] = "tunekit-artifact"; }));
  EXPECT_NE(m.find("'format' must be"), std::string::npos) << m;
  m = error_of(with([](auto& j) { j["version"] = 99; }));
  EXPECT_NE(m.find("newer than this tunekit reads"), std::string::npos) << m;
  EXPECT_EQ(error_of("[1, 2]").find("must be an object") != std::string::npos, true);
}

TEST(DeviceProfile, MissingFileSaysHowToMakeOne) {
  try {
    read_profile("/nonexistent/dir/p.json");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/p.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("tunekit calibrate --out"), std::string::npos);
  }
}

using testing::error_within;
using testing::TempDir;

std::string profile_read_error(const fs::path& path) {
  const std::string p = path.string();
  const std::string m = error_within(std::chrono::seconds(20), [p] { read_profile(p); });
  EXPECT_NE(m, "blocked") << p;
  EXPECT_NE(m.find(p), std::string::npos) << m;
  return m;
}

TEST(DeviceProfile, ReadingRefusesFifosDevicesDirectoriesAndOversizeFiles) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  EXPECT_NE(profile_read_error(dir / "fifo.json").find("FIFO"), std::string::npos);
  fs::create_symlink("/dev/zero", dir / "zero.json");
  EXPECT_NE(profile_read_error(dir / "zero.json").find("character device"), std::string::npos);
  fs::create_directories(dir / "dir.json");
  EXPECT_NE(profile_read_error(dir / "dir.json").find("directory"), std::string::npos);
  const fs::path big = dir.write("big.json", sample().to_json());
  fs::resize_file(big, (std::size_t{1} << 20) + 1);
  EXPECT_NE(profile_read_error(big).find("cap is 1048576 bytes"), std::string::npos);
  const std::string whole = sample().to_json();
  const std::string m =
      profile_read_error(dir.write("cut.json", whole.substr(0, whole.size() / 2)));
  EXPECT_NE(m.find("not valid JSON"), std::string::npos) << m;
}

TEST(DeviceProfile, WritingIsPrivateAndNeverFollowsOrReplacesASpecialFile) {
  TempDir dir;
  const fs::path path = dir / "new" / "p.json";
  write_profile(path.string(), sample());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir / "new").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  dir.write("victim", "precious");
  fs::create_symlink(dir / "victim", dir / "link.json");
  EXPECT_THROW(write_profile((dir / "link.json").string(), sample()), UsageError);
  EXPECT_EQ(testing::file_text(dir / "victim"), "precious");
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  const std::string fifo = (dir / "fifo.json").string();
  EXPECT_NE(error_within(std::chrono::seconds(20), [fifo] { write_profile(fifo, sample()); })
                .find("FIFO"),
            std::string::npos);
  ASSERT_TRUE(testing::make_special_file(dir / "full.json"));
  EXPECT_THROW(write_profile((dir / "full.json").string(), sample()), UsageError);
  // A planted symlink at the old predictable temp name is never followed.
  fs::create_symlink(dir / "victim", dir / (".p.json.tmp-" + std::to_string(::getpid())));
  write_profile((dir / "p.json").string(), sample());
  EXPECT_EQ(testing::file_text(dir / "victim"), "precious");
}

}  // namespace
}  // namespace tunekit
