// nvrtc_compiler.cpp / nvrtc_api.cpp: NVRTC (no GPU needed) compiles for sm_80 and sm_90 into
// cubins; a syntax error, an unknown architecture and a missing NVRTC are compile_failed with
// a message that says why; defines given as options reach the source.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/nvrtc_compiler.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::cuda {
namespace {

constexpr const char* kScale = R"(
#ifndef FACTOR
#define FACTOR 1.0f
#endif
extern "C" __global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a * FACTOR;
}
)";

bool is_elf(const std::vector<char>& binary) {
  return binary.size() > 4 && binary[0] == '\x7f' && binary[1] == 'E' && binary[2] == 'L' &&
         binary[3] == 'F';
}

// The message of the TrialError `f` throws; fails the test when it throws none or another status.
template <class F>
std::string compile_failure(F&& f) {
  try {
    f();
  } catch (const TrialError& e) {
    EXPECT_EQ(e.status(), Status::compile_failed) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "the compile succeeded";
  return "";
}

TEST(NvrtcCompiler, VersionIsKnown) {
  const std::string version = nvrtc_version();
  ASSERT_FALSE(version.empty()) << "NVRTC did not load: " << detail::nvrtc_api().error;
  EXPECT_TRUE(std::regex_match(version, std::regex("[0-9]+\\.[0-9]+"))) << version;
}

TEST(NvrtcCompiler, ASmallKernelCompilesToACubinForSm80AndSm90) {
  auto compiler = nvrtc_compiler();
  for (const std::string arch : {"sm_80", "sm_90"}) {
    const ModuleImage image = compiler->compile(kScale, {}, arch);
    EXPECT_EQ(image.arch, arch);
    EXPECT_TRUE(is_elf(image.binary)) << arch << ": " << image.binary.size() << " bytes";
  }
  EXPECT_EQ(compiler->stats().builds, 2u);
  EXPECT_GT(compiler->stats().seconds, 0.0);
}

TEST(NvrtcCompiler, ASyntaxErrorIsCompileFailedWithNvrtcsLog) {
  auto compiler = nvrtc_compiler();
  const std::string source =
      "extern \"C\" __global__ void k(float* x) { x[0] = undeclared_thing_42; }";
  const std::string message =
      compile_failure([&] { compiler->compile(source, {"-DBM=64"}, "sm_90"); });
  EXPECT_NE(message.find("undeclared_thing_42"), std::string::npos) << message;
  EXPECT_NE(message.find("is undefined"), std::string::npos) << message;  // NVRTC's own text
  EXPECT_NE(message.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << message;
  EXPECT_NE(message.find("-DBM=64"), std::string::npos) << message;
  EXPECT_EQ(compiler->stats().builds, 1u);
}

TEST(NvrtcCompiler, DefinesGivenAsOptionsChangeTheResult) {
  auto compiler = nvrtc_compiler();
  const ModuleImage two = compiler->compile(kScale, {"-DFACTOR=2.0f"}, "sm_90");
  const ModuleImage three = compiler->compile(kScale, {"-DFACTOR=3.0f"}, "sm_90");
  EXPECT_NE(two.binary, three.binary);
  EXPECT_EQ(two.binary, compiler->compile(kScale, {"-DFACTOR=2.0f"}, "sm_90").binary);

  const std::string needs =
      "#ifndef REQUIRED\n#error REQUIRED_is_missing\n#endif\n" + std::string(kScale);
  const std::string message = compile_failure([&] { compiler->compile(needs, {}, "sm_80"); });
  EXPECT_NE(message.find("REQUIRED_is_missing"), std::string::npos) << message;
  EXPECT_TRUE(is_elf(compiler->compile(needs, {"-DREQUIRED=1"}, "sm_80").binary));
}

TEST(NvrtcCompiler, AnArchitectureNvrtcDoesNotKnowIsCompileFailed) {
  auto compiler = nvrtc_compiler();
  const std::string unknown = compile_failure([&] { compiler->compile(kScale, {}, "sm_1"); });
  EXPECT_NE(unknown.find("sm_1"), std::string::npos) << unknown;
  // Not a real architecture: NVRTC would emit PTX, not the cubin a module image is.
  for (const std::string arch : {"compute_90", "", "sm_", "sm_90x", "90"}) {
    const std::string message = compile_failure([&] { compiler->compile(kScale, {}, arch); });
    EXPECT_NE(message.find("real architecture"), std::string::npos) << message;
  }
}

TEST(NvrtcCompiler, AMissingNvrtcIsCompileFailedNamingTheLibrary) {
  detail::NvrtcApi missing;
  missing.error = "libnvrtc.so.13: cannot open shared object file: No such file or directory";
  detail::NvrtcCompiler compiler(missing);
  const std::string message = compile_failure([&] { compiler.compile(kScale, {}, "sm_90"); });
  EXPECT_NE(message.find("libnvrtc.so.13: cannot open shared object file"), std::string::npos)
      << message;
  EXPECT_EQ(compiler.stats().builds, 0u);
  EXPECT_EQ(detail::nvrtc_version_of(missing), "");
}

TEST(NvrtcCompiler, ALongLogIsCutAndSaysSo) {
  const std::string log(3 * detail::kNvrtcLogLimit, 'x');
  const std::string cut = detail::bounded_nvrtc_log(log);
  EXPECT_LT(cut.size(), detail::kNvrtcLogLimit + 200);
  EXPECT_NE(cut.find("NVRTC log cut"), std::string::npos);
  EXPECT_NE(cut.find(std::to_string(log.size())), std::string::npos);
  EXPECT_EQ(detail::bounded_nvrtc_log("short"), "short");
}

// A fake NVRTC whose compile fails with a 40 KiB log: the message carries its head and says it
// was cut; the program is destroyed.
struct FakeNvrtc {
  static inline int destroyed = 0;
  static inline const std::string log =
      "fake.cu(1): error: first_error_here\n" + std::string(40 * 1024, 'e');
  static detail::NvrtcApi table() {
    detail::NvrtcApi api;
    api.loaded = true;
    api.version = [](int* major, int* minor) {
      *major = 99;
      *minor = 1;
      return NVRTC_SUCCESS;
    };
    api.create_program = [](nvrtcProgram* p, const char*, const char*, int, const char* const*,
                            const char* const*) {
      *p = reinterpret_cast<nvrtcProgram>(&destroyed);
      return NVRTC_SUCCESS;
    };
    api.compile_program = [](nvrtcProgram, int, const char* const*) {
      return NVRTC_ERROR_COMPILATION;
    };
    api.get_program_log_size = [](nvrtcProgram, std::size_t* size) {
      *size = log.size() + 1;
      return NVRTC_SUCCESS;
    };
    api.get_program_log = [](nvrtcProgram, char* out) {
      std::copy(log.c_str(), log.c_str() + log.size() + 1, out);
      return NVRTC_SUCCESS;
    };
    api.destroy_program = [](nvrtcProgram* p) {
      ++destroyed;
      *p = nullptr;
      return NVRTC_SUCCESS;
    };
    api.get_error_string = [](nvrtcResult) { return "NVRTC_ERROR_COMPILATION"; };
    return api;
  }
};

TEST(NvrtcCompiler, AHugeLogIsCutInTheMessageAndTheProgramIsDestroyed) {
  const detail::NvrtcApi api = FakeNvrtc::table();
  detail::NvrtcCompiler compiler(api);
  const std::string message = compile_failure([&] { compiler.compile(kScale, {}, "sm_90"); });
  EXPECT_NE(message.find("first_error_here"), std::string::npos);
  EXPECT_NE(message.find("NVRTC log cut"), std::string::npos);
  EXPECT_LT(message.size(), detail::kNvrtcLogLimit + 400);
  EXPECT_EQ(FakeNvrtc::destroyed, 1);
  EXPECT_EQ(compiler.stats().builds, 1u);
  EXPECT_EQ(detail::nvrtc_version_of(api), "99.1");
}

TEST(NvrtcCompiler, ConcurrentCompilesOfDifferentSourcesAllSucceed) {
  auto compiler = nvrtc_compiler();
  std::vector<std::vector<char>> binaries(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < binaries.size(); ++t) {
    threads.emplace_back([&, t] {
      const std::string define = "-DFACTOR=" + std::to_string(t + 2) + ".0f";
      binaries[t] = compiler->compile(kScale, {define}, "sm_80").binary;
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& binary : binaries) EXPECT_TRUE(is_elf(binary));
  EXPECT_EQ(compiler->stats().builds, binaries.size());
}

}  // namespace
}  // namespace tunekit::cuda
