// caching_compiler.cpp: nothing is built twice per (source digest, options, device); a failed
// build is remembered with its log; concurrent builds of different programs overlap, and of
// the same program build once. Counted through fake compilers: no OpenCL runtime needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tunekit/opencl.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::opencl {
namespace {

// Counts builds; a source containing "syntax error" fails like a compiler would.
class CountingCompiler final : public Compiler {
 public:
  explicit CountingCompiler(int* builds) : builds_(builds) {}
  Program build(std::string_view source, const std::string&) override {
    ++*builds_;
    if (source.find("syntax error") != std::string_view::npos)
      throw TrialError(Status::compile_failed, "build log: error: expected ';'");
    return Program();
  }
  BuildStats stats() const override { return {static_cast<std::size_t>(*builds_), 0, 0}; }

 private:
  int* builds_;
};

TEST(CachingCompiler, SecondBuildOfTheSameSourceAndOptionsIsAHit) {
  int builds = 0;
  CachingCompiler cache(std::make_unique<CountingCompiler>(&builds), "device-a");
  cache.build("kernel void k() {}", "-DX=1");
  cache.build("kernel void k() {}", "-DX=1");
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache.stats().builds, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
}

TEST(CachingCompiler, OtherOptionsOrSourceBuildAgain) {
  int builds = 0;
  CachingCompiler cache(std::make_unique<CountingCompiler>(&builds), "device-a");
  cache.build("kernel void k() {}", "-DX=1");
  cache.build("kernel void k() {}", "-DX=2");
  cache.build("kernel void k() { }", "-DX=1");
  EXPECT_EQ(builds, 3);
  EXPECT_EQ(cache.stats().hits, 0u);
}

TEST(CachingCompiler, AFailedBuildIsRememberedWithItsLog) {
  int builds = 0;
  CachingCompiler cache(std::make_unique<CountingCompiler>(&builds), "device-a");
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      cache.build("kernel void k() { syntax error }", "");
      FAIL() << "a broken source built";
    } catch (const TrialError& e) {
      EXPECT_EQ(e.status(), Status::compile_failed);
      EXPECT_NE(std::string(e.what()).find("expected ';'"), std::string::npos);
    }
  }
  EXPECT_EQ(builds, 1);
}

// Takes `delay` per build and records how many builds ran at once; thread-safe. With
// `rendezvous` > 1 a build also waits (up to 5 s) until that many builds are in flight, so
// overlap does not depend on how fast threads start.
class SlowCompiler final : public Compiler {
 public:
  explicit SlowCompiler(std::chrono::milliseconds delay, int rendezvous = 1)
      : delay_(delay), rendezvous_(rendezvous) {}
  Program build(std::string_view source, const std::string&) override {
    const int now = ++in_flight_;
    int seen = most_.load();
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (in_flight_.load() < rendezvous_ && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(delay_);
    --in_flight_;
    ++builds_;
    if (source.find("syntax error") != std::string_view::npos)
      throw TrialError(Status::compile_failed, "build log: error: expected ';'");
    return Program();
  }
  BuildStats stats() const override { return {static_cast<std::size_t>(builds_.load()), 0, 0}; }
  int most_at_once() const { return most_.load(); }

 private:
  std::chrono::milliseconds delay_;
  int rendezvous_;
  std::atomic<int> in_flight_{0}, most_{0}, builds_{0};
};

TEST(CachingCompiler, DifferentProgramsBuildConcurrently) {
  auto slow = std::make_unique<SlowCompiler>(std::chrono::milliseconds(20), 2);
  SlowCompiler* fake = slow.get();
  CachingCompiler cache(std::move(slow), "device-a");
  std::vector<std::jthread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back(
        [&cache, t] { cache.build("kernel void k() {}", "-DX=" + std::to_string(t)); });
  threads.clear();  // joined
  EXPECT_EQ(cache.stats().builds, 2u);
  EXPECT_EQ(fake->most_at_once(), 2);  // the compile runs outside the cache's lock
}

TEST(CachingCompiler, TwoThreadsAskingForOneProgramBuildItOnce) {
  auto slow = std::make_unique<SlowCompiler>(std::chrono::milliseconds(200));
  SlowCompiler* fake = slow.get();
  CachingCompiler cache(std::move(slow), "device-a");
  std::atomic<int> failures{0};
  std::vector<std::jthread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, &failures] {
      cache.build("kernel void k() {}", "-DSAME=1");
      try {
        cache.build("kernel void k() { syntax error }", "");
      } catch (const TrialError& e) {
        if (e.status() == Status::compile_failed &&
            std::string(e.what()).find("expected ';'") != std::string::npos)
          ++failures;
      }
    });
  }
  threads.clear();
  EXPECT_EQ(cache.stats().builds, 2u);  // one good and one broken program, each built once
  EXPECT_EQ(cache.stats().hits, 6u);    // everyone else waited and shared the result
  EXPECT_EQ(failures.load(), 4);        // the remembered failure carries the log
  EXPECT_EQ(fake->most_at_once(), 1);   // nobody raced a twin build
}

}  // namespace
}  // namespace tunekit::opencl
