// Tests for src/space/t1_space_file.cpp: the reader refuses what is not a bounded regular file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "fakes/hostile_files.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/space.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;
using testing::error_within;
using testing::TempDir;

constexpr const char* kSpace = R"({"ConfigurationSpace": {
  "TuningParameters": [{"Name": "b", "Type": "int", "Values": "[32, 64]"}],
  "Conditions": []}})";

// Bounded: a FIFO or a device that blocks or never ends must fail the test, not hang it.
std::string t1_read_error(const fs::path& file) {
  const std::string m = error_within(std::chrono::seconds(20), [file] { read_t1_space(file); });
  EXPECT_NE(m, "blocked") << file;
  EXPECT_NE(m.find(file.string()), std::string::npos) << m;
  return m;
}

TEST(T1SpaceFile, ReadsARegularFileOrASymlinkToOne) {
  TempDir dir;
  const fs::path file = dir.write("space.json", kSpace);
  fs::create_symlink(file, dir / "link.json");
  EXPECT_EQ(read_t1_space(dir / "link.json").enumerate().size(), 2u);
}

TEST(T1SpaceFile, RefusesAFifoWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "space.json").c_str(), 0600), 0);
  EXPECT_NE(t1_read_error(dir / "space.json").find("FIFO"), std::string::npos);
}

TEST(T1SpaceFile, RefusesDevicesAndDirectories) {
  TempDir dir;
  fs::create_symlink("/dev/zero", dir / "zero.json");
  EXPECT_NE(t1_read_error(dir / "zero.json").find("character device"), std::string::npos);
  fs::create_directories(dir / "dir.json");
  EXPECT_NE(t1_read_error(dir / "dir.json").find("directory"), std::string::npos);
}

TEST(T1SpaceFile, RefusesAnOversizeFileNamingSizeAndCap) {
  TempDir dir;
  const fs::path file = dir.write("big.json", kSpace);
  fs::resize_file(file, (std::size_t{16} << 20) + 1);  // sparse: costs no disk
  const std::string m = t1_read_error(file);
  EXPECT_NE(m.find("16777217 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("cap is 16777216 bytes"), std::string::npos) << m;
}

TEST(T1SpaceFile, RefusesATruncatedFile) {
  TempDir dir;
  const std::string whole = kSpace;
  const std::string m = t1_read_error(dir.write("cut.json", whole.substr(0, whole.size() / 2)));
  EXPECT_NE(m.find("not valid JSON"), std::string::npos) << m;
}

}  // namespace
}  // namespace tunekit
