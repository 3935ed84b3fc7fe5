// caching_compiler.cpp: nothing is built twice per (source digest, options, device); a failed
// build is remembered with its log. Counted through a fake compiler: no OpenCL runtime needed.
#include <gtest/gtest.h>

#include <memory>
#include <string>

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

}  // namespace
}  // namespace tunekit::opencl
