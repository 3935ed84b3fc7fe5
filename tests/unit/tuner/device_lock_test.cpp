// One search at a time per device (src/tuner/device_lock.cpp, src/tuner/device_turn.cpp and
// the search entry of src/tuner/tuner.cpp). Built into tunekit_concurrency_tests (TSan in CI).
#include "tuner/device_lock.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "fakes/fake_device.hpp"
#include "fakes/temp_dir.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"
#include "tuner/device_turn.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;
using detail::DeviceLock;
using State = detail::DeviceLock::State;
using fakes::FakeDevice;
using fakes::make_fake_op;

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

// Spins (bounded, so a regression fails instead of hanging) until `done` holds.
template <class F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void make_two_candidates(FakeDevice& dev) {
  dev.behaviour["def"].seconds = 2e-3;
  dev.behaviour["fast"].seconds = 1e-3;
}

TEST(DeviceLock, ASecondHolderIsBusyUntilTheFirstIsGone) {
  testing::TempDir dir;
  const std::string path = (dir / "locks/dev.lock").string();
  auto first = std::make_unique<DeviceLock>(path);
  EXPECT_EQ(first->try_lock(), State::held);
  DeviceLock second(path);  // another open file description: flock excludes it like a process
  EXPECT_EQ(second.try_lock(), State::busy);
  first.reset();
  EXPECT_EQ(second.try_lock(), State::held);
}

TEST(DeviceLock, CreatesAPrivateDirectoryAndFile) {
  testing::TempDir dir;
  DeviceLock lock((dir / "a/locks/dev.lock").string());
  EXPECT_EQ(lock.try_lock(), State::held) << lock.problem();
  EXPECT_EQ(mode_of(dir / "a/locks"), 0700u);
  EXPECT_EQ(mode_of(dir / "a/locks/dev.lock"), 0600u);
}

TEST(DeviceLock, PathIsNamedAfterTheDeviceDigest) {
  DeviceIdentity a;
  a.backend = "cpu";
  a.product = "one";
  DeviceIdentity b = a;
  b.product = "two";
  EXPECT_EQ(DeviceLock::path_for("/x", a), DeviceLock::path_for("/x", a));
  EXPECT_NE(DeviceLock::path_for("/x", a), DeviceLock::path_for("/x", b));
  EXPECT_EQ(fs::path(DeviceLock::path_for("/x", a)).extension(), ".lock");
}

TEST(DeviceLock, ASymlinkAtThePathIsRefusedNotFollowed) {
  testing::TempDir dir;
  fs::create_directory(dir / "locks", dir.path());
  fs::permissions(dir / "locks", fs::perms::owner_all);
  const fs::path target = dir.write("victim", "keep");
  fs::create_symlink(target, dir / "locks/dev.lock");
  DeviceLock lock((dir / "locks/dev.lock").string());
  EXPECT_EQ(lock.try_lock(), State::unusable);
  EXPECT_NE(lock.problem().find("dev.lock"), std::string::npos) << lock.problem();
  EXPECT_EQ(fs::file_size(target), 4u);
}

TEST(DeviceLock, AFifoAtThePathIsRefusedWithoutHanging) {
  testing::TempDir dir;
  fs::create_directory(dir / "locks");
  fs::permissions(dir / "locks", fs::perms::owner_all);
  ASSERT_EQ(::mkfifo((dir / "locks/dev.lock").c_str(), 0600), 0);
  DeviceLock lock((dir / "locks/dev.lock").string());
  EXPECT_EQ(lock.try_lock(), State::unusable);
  EXPECT_NE(lock.problem().find("not a regular file"), std::string::npos) << lock.problem();
}

TEST(DeviceLock, ADirectoryOthersCanWriteIsRefused) {
  testing::TempDir dir;
  fs::create_directory(dir / "locks");
  ASSERT_EQ(::chmod((dir / "locks").c_str(), 0777), 0);
  DeviceLock lock((dir / "locks/dev.lock").string());
  EXPECT_EQ(lock.try_lock(), State::unusable);
  EXPECT_NE(lock.problem().find("is writable by others"), std::string::npos) << lock.problem();
}

TEST(DeviceLock, AFileAnotherUserPlantedIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  testing::TempDir dir;
  fs::create_directory(dir / "locks");
  fs::permissions(dir / "locks", fs::perms::owner_all);
  const fs::path planted = dir.write("locks/dev.lock", "");
  ASSERT_EQ(::chown(planted.c_str(), 65534, 65534), 0);
  DeviceLock lock(planted.string());
  EXPECT_EQ(lock.try_lock(), State::unusable);
  EXPECT_NE(lock.problem().find("owned by another user"), std::string::npos) << lock.problem();
}

TEST(DeviceLock, LockWithinGivesUpAfterItsWaitAndTakesAFreedLock) {
  testing::TempDir dir;
  const std::string path = (dir / "locks/dev.lock").string();
  auto holder = std::make_unique<DeviceLock>(path);
  ASSERT_EQ(holder->try_lock(), State::held);
  DeviceLock waiter(path);
  EXPECT_EQ(waiter.lock_within(0.05), State::busy);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    holder.reset();
  });
  EXPECT_EQ(waiter.lock_within(30), State::held);
  release.join();
}

TEST(DeviceTurn, OneTurnPerDeviceAndItEndsWithTheTurn) {
  FakeDevice dev;
  FakeDevice other;
  {
    detail::DeviceTurn first(dev, "", 0);
    EXPECT_TRUE(first.granted());
    detail::DeviceTurn second(dev, "", 0);
    EXPECT_FALSE(second.granted());
    EXPECT_EQ(second.refusal(), "another search is running on this device");
    EXPECT_TRUE(detail::DeviceTurn(other, "", 0).granted());  // another device is free
  }
  EXPECT_TRUE(detail::DeviceTurn(dev, "", 0).granted());
}

TEST(DeviceTurn, ARefusedLockGivesBackThisProcesssTurn) {
  testing::TempDir dir;
  const std::string path = (dir / "locks/dev.lock").string();
  DeviceLock other_process(path);
  ASSERT_EQ(other_process.try_lock(), State::held);
  FakeDevice dev;
  {
    detail::DeviceTurn refused(dev, path, 0);
    EXPECT_FALSE(refused.granted());
    EXPECT_NE(refused.refusal().find("another process"), std::string::npos);
    EXPECT_NE(refused.refusal().find("wait_for_device_seconds"), std::string::npos);
  }
  EXPECT_TRUE(detail::DeviceTurn(dev, "", 0).granted());
}

// Issue #12: two threads tuning different keys on one device are serialised; the contender
// is answered at once with the default and a reason, and its key is searched later.
TEST(DeviceSearchTurns, TwoThreadsTuningDifferentKeysTakeTurns) {
  FakeDevice dev;
  make_two_candidates(dev);
  std::atomic<bool> contender_answered{false};
  std::atomic<int> searching{0};
  // The first search blocks inside its launches until the contender was answered: that can
  // only happen if the contender did not wait for it.
  dev.behaviour["def"].hook = [&] {
    searching = 1;
    eventually([&] { return contender_answered.load(); });
  };
  std::atomic<int> inputs{0};
  auto op = make_fake_op(dev, {"def", "fast"}, "def", &inputs);
  op->checksum();  // seal before the threads start
  Tuner tuner(dev);
  TuneReport first;
  std::thread searcher([&] { tuner.select(*op, Key{{"n", 1}}, &first); });
  ASSERT_TRUE(eventually([&] { return searching.load() == 1; }));
  TuneReport second;
  std::thread contender([&] {
    tuner.select(*op, Key{{"n", 2}}, &second);
    contender_answered = true;
  });
  contender.join();
  searcher.join();
  EXPECT_EQ(first.source, Source::searched);
  EXPECT_EQ(second.source, Source::use_default);
  EXPECT_EQ(second.reason, "another search is running on this device");
  EXPECT_EQ(inputs.load(), 1);  // the contender built no workload
  dev.behaviour["def"].hook = nullptr;
  // Nothing was kept for the contender's key: a later call searches it.
  EXPECT_EQ(tuner.select(*op, Key{{"n", 2}}).source, Source::searched);
}

TEST(DeviceSearchTurns, TwoTunersOnOneDeviceShareItsTurn) {
  FakeDevice dev;
  make_two_candidates(dev);
  auto op = make_fake_op(dev, {"def", "fast"}, "def");
  Tuner outer(dev);
  Tuner inner(dev);
  TuneReport nested;
  bool asked = false;
  dev.behaviour["fast"].hook = [&] {
    if (asked) return;
    asked = true;
    // Another Tuner on the same device, from another thread: the device is busy.
    std::thread([&] { inner.select(*op, Key{{"n", 7}}, &nested); }).join();
  };
  EXPECT_EQ(outer.select(*op, Key{{"n", 1}}).source, Source::searched);
  ASSERT_TRUE(asked);
  EXPECT_EQ(nested.source, Source::use_default);
  EXPECT_EQ(nested.reason, "another search is running on this device");
}

TEST(DeviceSearchTurns, ASearchThatThrowsEndsItsTurn) {
  FakeDevice dev;
  dev.behaviour["def"].hook = [] { throw FatalError("device lost"); };
  auto op = make_fake_op(dev, {"def", "alt"}, "def");
  Tuner tuner(dev);
  EXPECT_THROW(tuner.select(*op, Key{{"n", 1}}), FatalError);
  dev.behaviour["def"].hook = nullptr;
  EXPECT_EQ(tuner.select(*op, Key{{"n", 2}}).source, Source::searched);
}

TEST(DeviceSearchTurns, AnotherProcesssLockServesTheDefaultAndKeepsNothing) {
  testing::TempDir dir;
  FakeDevice dev;
  make_two_candidates(dev);
  auto op = make_fake_op(dev, {"def", "fast"}, "def");
  TunerOptions options;
  options.persist.store = "sqlite:" + (dir / "choices.db").string();
  auto other = std::make_unique<DeviceLock>(
      DeviceLock::path_for((dir / "locks").string(), dev.identity()));  // beside the store
  ASSERT_EQ(other->try_lock(), State::held);
  Tuner tuner(dev, options);
  TuneReport r;
  EXPECT_EQ(tuner.select(*op, Key{{"n", 1}}, &r).source, Source::use_default);
  EXPECT_NE(r.reason.find("another process is searching on this device"), std::string::npos)
      << r.reason;
  EXPECT_TRUE(tuner.store()->list().empty());
  other.reset();
  EXPECT_EQ(tuner.select(*op, Key{{"n", 1}}).source, Source::searched);
}

TEST(DeviceSearchTurns, AWaiterReadsTheStoreAgainInsteadOfSearchingTwice) {
  testing::TempDir dir;
  FakeDevice dev;
  make_two_candidates(dev);
  std::atomic<int> inputs{0};
  auto op = make_fake_op(dev, {"def", "fast"}, "def", &inputs);
  TunerOptions options;
  options.persist.store = "sqlite:" + (dir / "choices.db").string();
  options.persist.lock_dir = (dir / "device-locks").string();
  options.persist.wait_for_device_seconds = 30;
  auto other =
      std::make_unique<DeviceLock>(DeviceLock::path_for(options.persist.lock_dir, dev.identity()));
  ASSERT_EQ(other->try_lock(), State::held);
  // "The other process": tunes the key into the same store while holding the lock.
  TunerOptions writer_options = options;
  writer_options.persist.lock_dir = "none";
  Tuner writer(dev, writer_options);
  ASSERT_EQ(writer.select(*op, Key{{"n", 1}}).source, Source::searched);
  ASSERT_EQ(inputs.load(), 1);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    other.reset();
  });
  Tuner waiter(dev, options);
  TuneReport r;
  EXPECT_EQ(waiter.select(*op, Key{{"n", 1}}, &r).source, Source::cache_replay) << r.reason;
  release.join();
  EXPECT_EQ(r.winner_name, "fast");
  EXPECT_EQ(inputs.load(), 2);  // not searched again: one validation run of the stored choice
}

TEST(DeviceSearchTurns, AWaitPastItsLimitServesTheDefault) {
  testing::TempDir dir;
  FakeDevice dev;
  make_two_candidates(dev);
  auto op = make_fake_op(dev, {"def", "fast"}, "def");
  TunerOptions options;
  options.persist.lock_dir = (dir / "locks").string();
  options.persist.wait_for_device_seconds = 0.05;
  DeviceLock other(DeviceLock::path_for(options.persist.lock_dir, dev.identity()));
  ASSERT_EQ(other.try_lock(), State::held);
  Tuner tuner(dev, options);
  TuneReport r;
  EXPECT_EQ(tuner.select(*op, Key{{"n", 1}}, &r).source, Source::use_default);
  EXPECT_NE(r.reason.find("past the 0.05 s wait"), std::string::npos) << r.reason;
}

TEST(DeviceSearchTurns, AnUnusableLockDirectoryWarnsOnceAndStillSearches) {
  testing::TempDir dir;
  const fs::path file = dir.write("not-a-directory", "x");
  FakeDevice dev;
  make_two_candidates(dev);
  auto op = make_fake_op(dev, {"def", "fast"}, "def");
  TunerOptions options;
  options.persist.lock_dir = (file / "locks").string();
  std::vector<std::string> warnings;
  options.hooks.log = Log::warnings_to([&](std::string_view m) { warnings.emplace_back(m); });
  Tuner tuner(dev, options);
  EXPECT_EQ(tuner.select(*op, Key{{"n", 1}}).source, Source::searched);
  EXPECT_EQ(tuner.select(*op, Key{{"n", 2}}).source, Source::searched);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("device lock not used"), std::string::npos) << warnings[0];
}

TEST(DeviceSearchTurns, AMemoryOnlyStoreLocksInProcessOnly) {
  FakeDevice dev;
  make_two_candidates(dev);
  auto op = make_fake_op(dev, {"def", "fast"}, "def");
  testing::TempDir dir;
  // A lock held in this directory is not consulted: TunerOptions{} names no lock directory.
  DeviceLock other(DeviceLock::path_for((dir / "locks").string(), dev.identity()));
  ASSERT_EQ(other.try_lock(), State::held);
  Tuner tuner(dev);
  EXPECT_EQ(tuner.select(*op, Key{{"n", 1}}).source, Source::searched);
}

TEST(DeviceSearchTurns, FromEnvironmentLocksInTheCacheDirectory) {
  const TunerOptions o = TunerOptions::from_environment([](const char* name) -> const char* {
    return std::string_view(name) == "TUNEKIT_CACHE_DIR" ? "/somewhere/cache" : nullptr;
  });
  EXPECT_EQ(o.persist.lock_dir, "/somewhere/cache/locks");
  EXPECT_EQ(o.persist.wait_for_device_seconds, 0);
}

TEST(DeviceSearchTurns, ABadWaitIsAUsageError) {
  FakeDevice dev;
  for (double wait :
       {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    TunerOptions options;
    options.persist.wait_for_device_seconds = wait;
    EXPECT_THROW(Tuner(dev, options), UsageError) << wait;
  }
}

}  // namespace
}  // namespace tunekit
