// The CUDA backend of a tunekit built without the CUDA toolkit (-DTUNEKIT_CUDA=OFF): compiled
// instead of every other file of this folder, it defines what include/tunekit/cuda.hpp and
// cuda_blas.hpp declare. There is no CUDA device (driver_status() says why, so `tunekit
// devices` lists none), and every call that would need CUDA is a UsageError saying to rebuild
// with the toolkit. Nothing here includes a CUDA header.
#include <filesystem>
#include <memory>
#include <string>

#include "tunekit/cuda.hpp"
#include "tunekit/cuda_blas.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"

namespace tunekit::cuda {
namespace {

constexpr const char* kWhy = "tunekit was built without the CUDA toolkit";

[[noreturn]] void unavailable(const std::string& what) {
  throw UsageError(what + " needs CUDA, but " + kWhy +
                   ": install the toolkit and rebuild tunekit (cmake -DTUNEKIT_CUDA=ON)");
}

// For constructors whose members need a context before the body could refuse.
[[noreturn]] std::shared_ptr<Context> no_context(const std::string& what) {
  unavailable(what);
}

}  // namespace

DriverStatus driver_status() {
  return {false, 0, kWhy};
}

std::string nvrtc_version() {
  return "";
}

std::vector<DeviceInfo> list_devices() {
  return {};
}

std::size_t select_device(std::span<const DeviceInfo>, std::string_view) {
  unavailable("selecting a CUDA device");
}

std::unique_ptr<Compiler> nvrtc_compiler() {
  unavailable("compiling with NVRTC");
}

struct CachingCompiler::Impl {};

CachingCompiler::CachingCompiler(std::unique_ptr<Compiler>, ModuleCacheOptions) {
  unavailable("the CUDA module cache");
}

CachingCompiler::~CachingCompiler() = default;

ModuleImage CachingCompiler::compile(std::string_view, const std::vector<std::string>&,
                                     const std::string&) {
  unavailable("the CUDA module cache");
}

BuildStats CachingCompiler::stats() const {
  return {};
}

// Only names a directory: the same answer as with the toolkit, so a store's layout does not
// depend on how tunekit was built.
std::filesystem::path module_cache_directory(std::string_view store_spec) {
  const std::string file = store_file_of(store_spec);
  if (file.empty()) return {};
  return std::filesystem::path(file).parent_path() / "cuda-modules";
}

void Function::launch(Dim3, Dim3, unsigned, std::span<void*>) {
  unavailable("launching a CUDA kernel");
}

Buffer::Buffer(Context&, std::size_t) {
  unavailable("CUDA device memory");
}

void Buffer::write(const void*, std::size_t) {
  unavailable("CUDA device memory");
}

void Buffer::read(void*, std::size_t) const {
  unavailable("CUDA device memory");
}

struct Context::Impl {};

std::shared_ptr<Context> Context::open(std::string_view, ContextOptions) {
  unavailable("opening a CUDA device");
}

Context::~Context() = default;

Function Context::function(std::string_view, const std::vector<std::string>&, const std::string&) {
  unavailable("a CUDA context");
}

void Context::synchronize() {
  unavailable("a CUDA context");
}

bool Context::lost() const {
  return false;
}

std::string Context::lost_reason() const {
  return "";
}

void Context::begin_window() {
  unavailable("a CUDA context");
}

double Context::end_window() {
  unavailable("a CUDA context");
}

void Context::before_enqueue() {
  unavailable("a CUDA context");
}

void Context::begin_capture() {
  unavailable("a CUDA context");
}

void* Context::end_capture() {
  unavailable("a CUDA context");
}

void Context::launch_graph(void*) {
  unavailable("a CUDA context");
}

void Context::destroy_graph(void*) {
  unavailable("a CUDA context");
}

void* Context::stream_handle() const {
  return nullptr;
}

L2Evictor::L2Evictor(std::shared_ptr<Context>) : context_(no_context("the CUDA L2 evictor")) {}

void L2Evictor::evict() {
  unavailable("the CUDA L2 evictor");
}

CudaDevice::CudaDevice(std::shared_ptr<Context>)
    : context_(no_context("a CUDA device")), clock_(context_), evictor_(context_) {}

std::unique_ptr<Trial> CudaDevice::make_trial(Workload&, std::size_t) {
  unavailable("a CUDA device");
}

BlasLibrary blas_library() {
  return {false, "", 0, kWhy};
}

Blas::Blas(std::shared_ptr<Context>) {
  unavailable("cuBLAS");
}

Blas::~Blas() = default;

void Blas::sgemm(const GemmShape&, const Buffer&, const Buffer&, Buffer&, const BlasAlgorithm&) {
  unavailable("cuBLAS");
}

}  // namespace tunekit::cuda
