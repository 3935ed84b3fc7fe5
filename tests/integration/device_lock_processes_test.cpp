// One search per device across processes (src/tuner/device_lock.cpp): workers spawned on one
// store and its lock directory, one of them holding the device while the test looks on.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/child_process.hpp"
#include "tunekit/store.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Bounds every wait of these tests: a regression fails them, never hangs them.
constexpr auto kPatience = std::chrono::seconds(90);

struct Worker {
  pid_t pid = -1;
  fs::path out;
  fs::path err;
};

class DeviceLockProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tunekit-devlock-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    for (const Worker& w : workers_) {
      if (::waitpid(w.pid, nullptr, WNOHANG) == 0) {
        ::kill(w.pid, SIGKILL);
        ::waitpid(w.pid, nullptr, 0);
      }
    }
    fs::remove_all(dir_);
  }

  // device_lock_worker on the test's store: tunes n=1, waiting `wait` s for the device;
  // with `hold`, keeps the device inside its search until release() is called.
  Worker start(const std::string& name, const std::string& wait, bool hold) {
    Worker w{-1, dir_ / (name + ".out"), dir_ / (name + ".err")};
    std::vector<std::string> args = {TUNEKIT_DEVICE_LOCK_WORKER, store(), "1", wait,
                                     hold ? hold_file().string() : "-"};
    w.pid = tunekit::testing::spawn_child(args, w.out.string(), w.err.string());
    workers_.push_back(w);
    return w;
  }

  // True once the holding worker is inside its search (so it holds the device lock).
  bool holder_is_searching() const {
    const auto deadline = Clock::now() + kPatience;
    while (!fs::exists(hold_file().string() + ".searching")) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  void release() const { std::ofstream(hold_file()) << "go"; }

  // The worker's exit status, or -1 when it did not exit in time.
  static int finish(const Worker& w) {
    const auto deadline = Clock::now() + kPatience;
    int status = 0;
    while (::waitpid(w.pid, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // "<source> <searches> <reason>" as the worker printed it.
  static std::string output(const Worker& w) {
    std::ifstream in(w.out);
    std::string line;
    std::getline(in, line);
    return line;
  }
  static std::string errors(const Worker& w) {
    std::ifstream in(w.err);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string store() const { return (dir_ / "choices.db").string(); }
  fs::path hold_file() const { return dir_ / "hold"; }

  fs::path dir_;
  std::vector<Worker> workers_;
};

TEST_F(DeviceLockProcesses, TwoProcessesTuningOneKeySearchOnce) {
  const Worker holder = start("holder", "0", /*hold=*/true);
  ASSERT_GT(holder.pid, 0);
  ASSERT_TRUE(holder_is_searching()) << errors(holder);
  const Worker second = start("second", "0", /*hold=*/false);
  ASSERT_GT(second.pid, 0);
  // Answered while the holder still searches: the second process did not wait.
  ASSERT_EQ(finish(second), 0) << errors(second);
  EXPECT_EQ(output(second).rfind("default 0 another process is searching on this device", 0), 0u)
      << output(second);
  release();
  ASSERT_EQ(finish(holder), 0) << errors(holder);
  EXPECT_EQ(output(holder).rfind("searched 1", 0), 0u) << output(holder);
  EXPECT_EQ(tunekit::open_store("sqlite:" + store(), {})->list().size(), 1u);
  EXPECT_TRUE(fs::is_directory(dir_ / "locks"));  // beside the store
}

TEST_F(DeviceLockProcesses, AKilledHolderLetsTheWaiterSearch) {
  const Worker holder = start("holder", "0", /*hold=*/true);
  ASSERT_GT(holder.pid, 0);
  ASSERT_TRUE(holder_is_searching()) << errors(holder);
  const Worker waiter = start("waiter", "90", /*hold=*/false);
  ASSERT_GT(waiter.pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let it reach the lock
  ::kill(holder.pid, SIGKILL);
  EXPECT_EQ(finish(holder), 128 + SIGKILL);
  // The kernel dropped the dead holder's lock; it stored nothing, so the waiter searches.
  ASSERT_EQ(finish(waiter), 0) << errors(waiter);
  EXPECT_EQ(output(waiter).rfind("searched 1", 0), 0u) << output(waiter);
}

TEST_F(DeviceLockProcesses, AWaiterServesTheHoldersChoiceWithoutSearching) {
  const Worker holder = start("holder", "0", /*hold=*/true);
  ASSERT_GT(holder.pid, 0);
  ASSERT_TRUE(holder_is_searching()) << errors(holder);
  const Worker waiter = start("waiter", "90", /*hold=*/false);
  ASSERT_GT(waiter.pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  release();
  ASSERT_EQ(finish(holder), 0) << errors(holder);
  EXPECT_EQ(output(holder).rfind("searched 1", 0), 0u) << output(holder);
  ASSERT_EQ(finish(waiter), 0) << errors(waiter);
  // No search: one workload, made for the replayed choice's validation run.
  EXPECT_EQ(output(waiter).rfind("cache_replay 1", 0), 0u) << output(waiter);
}

}  // namespace
