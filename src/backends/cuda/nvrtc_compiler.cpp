#include "backends/cuda/nvrtc_compiler.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <utility>

#include "tunekit/outcome.hpp"

namespace tunekit::detail {
namespace {

[[noreturn]] void fail(std::string message) {
  throw TrialError(Status::compile_failed, std::move(message));
}

// The number of "sm_90" / "sm_90a" / "sm_100f"; -1 for anything else (compute_90 would make
// NVRTC emit PTX, not a cubin).
int real_arch_number(const std::string& arch) {
  if (arch.size() < 4 || arch.compare(0, 3, "sm_") != 0) return -1;
  std::size_t end = 3;
  while (end < arch.size() && std::isdigit(static_cast<unsigned char>(arch[end]))) ++end;
  const std::size_t digits = end - 3;
  if (digits == 0 || digits > 4) return -1;
  if (end < arch.size() && !(end + 1 == arch.size() && (arch[end] == 'a' || arch[end] == 'f')))
    return -1;
  return std::stoi(arch.substr(3, digits));
}

std::string listed(const std::vector<int>& archs) {
  std::string out;
  for (int a : archs) out += (out.empty() ? "sm_" : ", sm_") + std::to_string(a);
  return out;
}

std::string joined_options(const std::vector<std::string>& options) {
  std::string out;
  for (const std::string& o : options) out += (out.empty() ? "" : " ") + o;
  return out.empty() ? "(none)" : out;
}

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
  std::size_t size = 0;
  if (api.get_program_log_size(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (api.get_program_log(program, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(std::min(log.size(), log.find('\0')));  // the size counts the terminating NUL
  return bounded_nvrtc_log(std::move(log));
}

}  // namespace

std::string bounded_nvrtc_log(std::string log) {
  if (log.size() <= kNvrtcLogLimit) return log;
  const std::size_t whole = log.size();
  log.resize(kNvrtcLogLimit);
  return log + "\n[NVRTC log cut: the first " + std::to_string(kNvrtcLogLimit) + " of " +
         std::to_string(whole) + " bytes]";
}

void NvrtcCompiler::check_arch(const std::string& arch) const {
  const int number = real_arch_number(arch);
  if (number < 0) {
    fail("cannot compile for '" + arch +
         "': give a real architecture such as sm_90 (NVRTC emits a cubin only for those)");
  }
  const std::vector<int> supported = nvrtc_supported_archs(api_);
  if (!supported.empty() &&
      std::find(supported.begin(), supported.end(), number) == supported.end())
    fail("NVRTC " + nvrtc_version_of(api_) + " cannot compile for " + arch + ": it knows " +
         listed(supported));
}

cuda::ModuleImage NvrtcCompiler::compile(std::string_view source,
                                         const std::vector<std::string>& options,
                                         const std::string& arch) {
  if (!api_.loaded)
    fail("NVRTC could not be loaded (" + api_.error +
         "); install the CUDA toolkit's NVRTC or put its library on the loader path");
  check_arch(arch);
  const std::string text(source);  // NVRTC takes a NUL-terminated source
  nvrtcProgram program = nullptr;
  if (nvrtcResult r =
          api_.create_program(&program, text.c_str(), "tunekit_module.cu", 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    fail("nvrtcCreateProgram failed: " + nvrtc_error_name(api_, r));
  const auto destroy = [this](nvrtcProgram* p) { api_.destroy_program(p); };
  std::unique_ptr<nvrtcProgram, decltype(destroy)> guard(&program, destroy);

  std::vector<std::string> all = {"--gpu-architecture=" + arch, "-default-device", "--std=c++17"};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& o : all) argv.push_back(o.c_str());

  const auto start = std::chrono::steady_clock::now();
  const nvrtcResult result =
      api_.compile_program(program, static_cast<int>(argv.size()), argv.data());
  {
    std::lock_guard lock(mutex_);
    ++stats_.builds;
    stats_.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  cuda::ModuleImage image{arch, {}, program_log(api_, program)};
  if (result != NVRTC_SUCCESS) {
    fail("NVRTC compile for " + arch + " failed: " + nvrtc_error_name(api_, result) +
         "; options: " + joined_options(options) + "; log:\n" + image.log);
  }
  std::size_t size = 0;
  if (nvrtcResult r = api_.get_cubin_size(program, &size); r != NVRTC_SUCCESS || size == 0)
    fail("NVRTC produced no cubin for " + arch + " (" + nvrtc_error_name(api_, r) + ")");
  image.binary.resize(size);
  if (nvrtcResult r = api_.get_cubin(program, image.binary.data()); r != NVRTC_SUCCESS)
    fail("nvrtcGetCUBIN failed for " + arch + ": " + nvrtc_error_name(api_, r));
  return image;
}

}  // namespace tunekit::detail

namespace tunekit::cuda {

std::unique_ptr<Compiler> nvrtc_compiler() {
  return std::make_unique<detail::NvrtcCompiler>(detail::nvrtc_api());
}

}  // namespace tunekit::cuda
