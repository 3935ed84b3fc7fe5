// The built-in OpenCL ops: spaces and factories. Private to kernels/ and its tests.
#pragma once

#include <cstddef>
#include <memory>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/space.hpp"

namespace tunekit::kernels::cl {

// Padding of the sgemm operands: M and N to a multiple of the largest MWG/NWG, K to one of the
// largest KWG, so that no tile of any candidate needs bounds checks.
inline constexpr std::size_t kSgemmPadMN = 128;
inline constexpr std::size_t kSgemmPadK = 32;

Space sgemm_space();
Config sgemm_default_config();
Space softmax_space();
Space rmsnorm_space();
Space conv2d_space();

std::unique_ptr<OpBase> make_sgemm_op(std::shared_ptr<opencl::Context> context,
                                      cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_softmax_op(std::shared_ptr<opencl::Context> context,
                                        cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_rmsnorm_op(std::shared_ptr<opencl::Context> context,
                                        cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_conv2d_op(std::shared_ptr<opencl::Context> context,
                                       cpu::ThreadPool& pool);

}  // namespace tunekit::kernels::cl
