// The compile pass (src/tuner/compile_pass.cpp): builds on several threads, classified
// failures, a fatal error rethrown on the caller's thread once every build has ended. Also
// built under TSan (tunekit_concurrency_tests).
#include "tuner/compile_pass.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

class BuildOnly final : public Trial {
 public:
  BuildOnly(std::atomic<int>& running, std::atomic<int>& peak, std::function<Outcome()> result)
      : running_(running), peak_(peak), result_(std::move(result)) {}
  Outcome build() override {
    const int now = ++running_;
    int seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running_;
    return result_();
  }
  Outcome prepare() override { return Outcome::success(); }
  void launch() override {}
  void sync() override {}
  void release() override {}

 private:
  std::atomic<int>& running_;
  std::atomic<int>& peak_;
  std::function<Outcome()> result_;
};

double wall() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TEST(CompilePass, BuildsOverlapAndEachVerdictKeepsItsOutcomeAndTime) {
  std::atomic<int> running{0}, peak{0};
  std::vector<std::unique_ptr<Trial>> trials;
  for (int i = 0; i < 6; ++i) {
    trials.push_back(std::make_unique<BuildOnly>(running, peak, [i]() -> Outcome {
      if (i == 3) return {Status::compile_failed, "error: line 3"};
      if (i == 4) throw std::runtime_error("the compiler crashed");
      return Outcome::success();
    }));
  }
  const std::vector<BuildVerdict> v = build_all(trials, 3, wall);
  ASSERT_EQ(v.size(), 6u);
  EXPECT_GE(peak.load(), 2);
  EXPECT_LE(peak.load(), 3);
  EXPECT_EQ(v[3].outcome.status, Status::compile_failed);
  EXPECT_EQ(v[3].outcome.message, "error: line 3");
  EXPECT_EQ(v[4].outcome.status, Status::compile_failed);  // a std::exception from a build
  EXPECT_NE(v[4].outcome.message.find("the compiler crashed"), std::string::npos);
  for (int i : {0, 1, 2, 5}) {
    EXPECT_TRUE(v[i].outcome.ok()) << i;
    EXPECT_GE(v[i].seconds, 0.015) << i;
  }
}

TEST(CompilePass, OneThreadBuildsInOrderOnTheCallersThread) {
  std::atomic<int> running{0}, peak{0};
  std::vector<std::unique_ptr<Trial>> trials;
  const auto caller = std::this_thread::get_id();
  std::vector<std::thread::id> seen;
  for (int i = 0; i < 3; ++i) {
    trials.push_back(std::make_unique<BuildOnly>(running, peak, [&seen]() {
      seen.push_back(std::this_thread::get_id());
      return Outcome::success();
    }));
  }
  build_all(trials, 1, wall);
  EXPECT_EQ(peak.load(), 1);
  ASSERT_EQ(seen.size(), 3u);
  for (const auto& id : seen) EXPECT_EQ(id, caller);
}

TEST(CompilePass, AFatalErrorIsRethrownAfterEveryBuildEnded) {
  std::atomic<int> running{0}, peak{0};
  std::atomic<int> finished{0};
  std::vector<std::unique_ptr<Trial>> trials;
  for (int i = 0; i < 4; ++i) {
    trials.push_back(std::make_unique<BuildOnly>(running, peak, [i, &finished]() -> Outcome {
      ++finished;
      if (i == 1) throw FatalError("device lost during a build");
      return Outcome::success();
    }));
  }
  EXPECT_THROW(build_all(trials, 2, wall), FatalError);
  EXPECT_EQ(finished.load(), 4);
  EXPECT_EQ(running.load(), 0);
}

}  // namespace
}  // namespace tunekit::detail
