// Tests for src/core/safe_file.cpp (atomic writes, outside reads, bounded gunzip, trust).
#include "core/safe_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A fresh directory under the build's working directory (inside the checkout's build tree).
class SafeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::current_path() / ("safe_file_test_" + std::to_string(::getpid()) + "_" +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path dir_;
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// Runs `f` on a guard thread: a regression that blocks fails the test instead of hanging it.
std::string message_within(std::chrono::seconds limit, std::function<void()> f) {
  auto task = std::make_shared<std::packaged_task<std::string()>>([f] { return message_of(f); });
  auto result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "the call blocked";
    return "blocked";
  }
  return result.get();
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0);
  return st.st_mode & 07777;
}

std::string gzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST_F(SafeFile, WritesAtomicallyWithPrivateMode) {
  const fs::path target = dir_ / "a.json";
  write_file_atomically(target, "one", "artifact");
  EXPECT_EQ(slurp(target), "one");
  EXPECT_EQ(mode_of(target), 0600u);
  write_file_atomically(target, "two", "artifact");  // replaces a regular file
  EXPECT_EQ(slurp(target), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 1) << "no temp file is left";
}

TEST_F(SafeFile, RefusesToReplaceASymlinkAndNeverFollowsIt) {
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir_ / "out.json");
  const std::string m =
      message_of([&] { write_file_atomically(dir_ / "out.json", "x", "export"); });
  EXPECT_NE(m.find("symbolic link"), std::string::npos) << m;
  EXPECT_NE(m.find("out.json"), std::string::npos) << m;
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(dir_ / "out.json"));
}

TEST_F(SafeFile, RefusesToReplaceAFifoWithoutBlocking) {
  const fs::path fifo = dir_ / "out.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string m = message_within(10s, [&] { write_file_atomically(fifo, "x", "export"); });
  EXPECT_NE(m.find("FIFO"), std::string::npos) << m;
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(SafeFile, RefusesToReplaceADirectoryOrADevice) {
  fs::create_directories(dir_ / "sub");
  EXPECT_NE(message_of([&] { write_file_atomically(dir_ / "sub", "x"); }).find("directory"),
            std::string::npos);
  // A device like /dev/full, made here (a regression must not replace the real one).
  const fs::path full = dir_ / "full";
  if (::mknod(full.c_str(), S_IFCHR | 0600, ::makedev(1, 7)) == 0) {
    const std::string m = message_of([&] { write_file_atomically(full, "x", "export"); });
    EXPECT_NE(m.find("character device"), std::string::npos) << m;
    EXPECT_FALSE(fs::is_regular_file(full));
  }
  fs::create_symlink("/dev/full", dir_ / "link");  // refused as a link, the device untouched
  EXPECT_NE(message_of([&] { write_file_atomically(dir_ / "link", "x"); }).find("symbolic link"),
            std::string::npos);
}

TEST_F(SafeFile, APlantedSymlinkAtATempNameIsNeverFollowed) {
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "precious";
  // Plant symlinks at every name a pid-only scheme would use, and a few random-looking ones.
  const std::string prefix = ".out.json.tmp-" + std::to_string(::getpid());
  fs::create_symlink(victim, dir_ / prefix);
  fs::create_symlink(victim, dir_ / (prefix + "-0000000000000000"));
  write_file_atomically(dir_ / "out.json", "fresh", "export");
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_EQ(slurp(dir_ / "out.json"), "fresh");
  EXPECT_TRUE(fs::is_symlink(dir_ / prefix)) << "a live writer's names are left alone";
}

TEST_F(SafeFile, StaleTempFilesOfDeadWritersAreRemoved) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // reaped: kill(child, 0) is ESRCH now
  const fs::path dead = dir_ / (".out.json.tmp-" + std::to_string(child) + "-abcdef");
  const fs::path alive = dir_ / (".out.json.tmp-" + std::to_string(::getpid()) + "-abcdef");
  const fs::path other = dir_ / (".other.json.tmp-" + std::to_string(child) + "-abcdef");
  for (const fs::path& p : {dead, alive, other}) std::ofstream(p) << "partial";
  write_file_atomically(dir_ / "out.json", "x");
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(other)) << "another target's temp files are not touched";
}

TEST_F(SafeFile, AMissingDirectoryIsAClearError) {
  const std::string m = message_of([&] { write_file_atomically(dir_ / "no" / "f.json", "x"); });
  EXPECT_NE(m.find("temp file"), std::string::npos) << m;
}

TEST_F(SafeFile, MakesPrivateDirectories) {
  make_private_directories(dir_ / "a" / "b");
  EXPECT_EQ(mode_of(dir_ / "a"), 0700u);
  EXPECT_EQ(mode_of(dir_ / "a" / "b"), 0700u);
  make_private_directories(dir_ / "a" / "b");  // existing: fine
  std::ofstream(dir_ / "file") << "x";
  const std::string m = message_of([&] { make_private_directories(dir_ / "file" / "c"); });
  EXPECT_NE(m.find("is a regular file"), std::string::npos) << m;
}

TEST_F(SafeFile, TrustsOnlyPrivateDirectories) {
  EXPECT_TRUE(directory_trust(dir_ / "missing").trusted());
  fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
  EXPECT_TRUE(directory_trust(dir_).trusted());
  fs::permissions(dir_, fs::perms::all, fs::perm_options::replace);
  const Trust open = directory_trust(dir_);
  EXPECT_EQ(open.problem, Distrust::writable_by_others);
  EXPECT_NE(open.message.find("0777"), std::string::npos) << open.message;
  fs::permissions(dir_, fs::perms::all | fs::perms::sticky_bit, fs::perm_options::replace);
  EXPECT_TRUE(directory_trust(dir_).trusted()) << "a sticky directory like /tmp is tolerated";
  std::ofstream(dir_ / "store.db") << "x";
  fs::permissions(dir_ / "store.db", fs::perms::owner_read | fs::perms::group_write,
                  fs::perm_options::replace);
  EXPECT_EQ(directory_trust(dir_ / "store.db").problem, Distrust::writable_by_others);
}

TEST_F(SafeFile, DistrustsWhatAnotherUserOwns) {
  std::ofstream(dir_ / "store.db") << "x";
  if (::geteuid() != 0) {
    // Without root no file of another user can be made here; a root-owned one is trusted.
    EXPECT_TRUE(directory_trust("/").trusted());
    return;
  }
  ASSERT_EQ(::chown((dir_ / "store.db").c_str(), 12345, 12345), 0);
  const Trust planted = directory_trust(dir_ / "store.db");
  EXPECT_EQ(planted.problem, Distrust::owned_by_other_user);
  EXPECT_NE(planted.message.find("uid 12345"), std::string::npos) << planted.message;
}

TEST_F(SafeFile, ReadsARegularFileOrASymlinkToOne) {
  std::ofstream(dir_ / "f") << "hello";
  fs::create_symlink(dir_ / "f", dir_ / "link");
  EXPECT_EQ(read_outside_file(dir_ / "f", 100, "artifact"), "hello");
  EXPECT_EQ(read_outside_file(dir_ / "link", 100, "artifact"), "hello");
}

TEST_F(SafeFile, RefusesAFifoPromptly) {
  const fs::path fifo = dir_ / "f";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string m = message_within(10s, [&] { read_outside_file(fifo, 100, "artifact"); });
  EXPECT_NE(m.find("FIFO"), std::string::npos) << m;
  EXPECT_NE(m.find("artifact"), std::string::npos) << m;
}

TEST_F(SafeFile, RefusesDevicesAndDirectoriesEvenThroughASymlink) {
  fs::create_symlink("/dev/zero", dir_ / "zero");
  const std::string m = message_within(10s, [&] { read_outside_file(dir_ / "zero", 100, "x"); });
  EXPECT_NE(m.find("character device"), std::string::npos) << m;
  EXPECT_NE(message_of([&] { read_outside_file(dir_, 100, "x"); }).find("directory"),
            std::string::npos);
  EXPECT_NE(message_of([&] { read_outside_file(dir_ / "none", 100, "x"); }).find("No such"),
            std::string::npos);
}

TEST_F(SafeFile, RefusesAFileOverTheCapNamingSizeAndCap) {
  std::ofstream(dir_ / "big") << std::string(1000, 'x');
  const std::string m = message_of([&] { read_outside_file(dir_ / "big", 999, "profile"); });
  EXPECT_NE(m.find("1000 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("999"), std::string::npos) << m;
  EXPECT_EQ(read_outside_file(dir_ / "big", 1000, "profile").size(), 1000u);
}

TEST(SafeGunzip, InflatesAndConcatenatesMembers) {
  const std::string data = "{\"a\": 1}";
  EXPECT_TRUE(looks_gzipped(gzip(data)));
  EXPECT_FALSE(looks_gzipped(data));
  EXPECT_EQ(gunzip_bounded(gzip(data), 100, "cache"), data);
  EXPECT_EQ(gunzip_bounded(gzip("ab") + gzip("cd"), 100, "cache"), "abcd");
}

TEST(SafeGunzip, RefusesAGzipBomb) {
  const std::string bomb = gzip(std::string(200u << 20, '\0'));  // 200 MB of zeros, ~200 KB
  ASSERT_LT(bomb.size(), 1u << 20);
  const std::string m = message_of([&] { gunzip_bounded(bomb, 64u << 20, "Kernel Tuner cache"); });
  EXPECT_NE(m.find("gzip bomb"), std::string::npos) << m;
  EXPECT_NE(m.find(std::to_string(64u << 20)), std::string::npos) << m;
}

TEST(SafeGunzip, RefusesTruncatedAndCorruptStreams) {
  const std::string whole = gzip(std::string(10000, 'q') + "tail");
  const std::string m =
      message_of([&] { gunzip_bounded(whole.substr(0, whole.size() / 2), 1 << 20, "x"); });
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;
  std::string corrupt = whole;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0xff);
  corrupt[13] = static_cast<char>(corrupt[13] ^ 0xff);
  EXPECT_FALSE(message_of([&] { gunzip_bounded(corrupt, 1 << 20, "x"); }).empty());
}

}  // namespace
}  // namespace tunekit::detail
