// The built-in CUDA ops: spaces and factories. Private to kernels/ and its tests.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/op.hpp"
#include "tunekit/space.hpp"

namespace tunekit::kernels::cu {

// What the build step of a point compiles: one module of `source` with `options`, and the
// kernels of it the point launches. The compile tests and the compile-all bench use the same.
struct KernelRecipe {
  std::string_view source;
  std::vector<std::string> options;
  std::vector<std::string> names;
};

// Padding of the sgemm operands on the device: M and N to a multiple of the largest BM / BN,
// K to one of the largest BK, so that no tile of any point needs bounds checks.
inline constexpr std::size_t kSgemmPadMN = 256;
inline constexpr std::size_t kSgemmPadK = 32;
// Split-k's partial results (SPLITK - 1 padded C matrices) are kept for results of at most
// this many padded elements (64 MiB each); beyond, M x N has blocks enough and split-k declines.
inline constexpr std::size_t kSgemmSplitKMaxElements = std::size_t{1} << 24;
inline constexpr int kSgemmMaxSplitK = 4;

// sgemm: the tile kernel's parameters and the library's (impl "tile" or "cublas", algo).
Space sgemm_space();
Config sgemm_default_config();
// The cuBLAS points (every value of algo with impl "cublas"): the op's anchors.
std::vector<Config> sgemm_cublas_configs();
// The build options of a tile point (SPLITK, impl and algo change the launch only).
std::vector<std::string> sgemm_options(const Config& config);
// nullopt for a cuBLAS point (nothing to compile).
std::optional<KernelRecipe> sgemm_recipe(const Config& config);

Space softmax_space();
Config softmax_default_config();
KernelRecipe softmax_recipe(const Config& config);
Space rmsnorm_space();
Config rmsnorm_default_config();
KernelRecipe rmsnorm_recipe(const Config& config);
Space conv2d_space();
Config conv2d_default_config();
// The filter's size (a key field) is part of the build.
KernelRecipe conv2d_recipe(const Config& config, std::size_t fh, std::size_t fw);

std::unique_ptr<OpBase> make_sgemm_op(std::shared_ptr<cuda::Context> context,
                                      cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_softmax_op(std::shared_ptr<cuda::Context> context,
                                        cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_rmsnorm_op(std::shared_ptr<cuda::Context> context,
                                        cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_conv2d_op(std::shared_ptr<cuda::Context> context,
                                       cpu::ThreadPool& pool);

}  // namespace tunekit::kernels::cu
