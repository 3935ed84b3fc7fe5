// sgemm: row-major single-precision matrix multiply C[m×n] = A[m×k]·B[k×n], the built-in
// CPU op with the widest candidate spread (a naive dot-product loop up to BLIS-style packed,
// register-blocked, multithreaded variants). Private to kernels/ and its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"

namespace tunekit::kernels {

struct SgemmArgs {
  std::size_t m = 0;
  std::size_t n = 0;
  std::size_t k = 0;
  std::vector<float> a;  // m×k, row-major
  std::vector<float> b;  // k×n, row-major
  std::vector<float> c;  // m×n, row-major; every candidate overwrites all of it
};

// Largest accepted m, n or k: three 8192² f32 matrices are 768 MiB.
inline constexpr std::int64_t kSgemmMaxDim = 8192;

// Order of the three cache-blocking loops of the packed variants.
enum class SgemmOrder {
  jpi,  // GotoBLAS: for jc { for pc { pack B panel; for ic (parallel) { pack A; compute } } }
  ijp,  // tiles: for (ic, jc) (parallel) { for pc { pack A; pack B; compute } }, nothing shared
};
std::string_view to_string(SgemmOrder order);

// One point of the packed space.
struct SgemmPacked {
  int mr = 6;  // register block rows; supported MR×NR: 4×8, 4×16, 6×16, 8×8
  int nr = 16;
  std::size_t mc = 96;  // cache blocks
  std::size_t kc = 256;
  std::size_t nc = 1024;
  SgemmOrder order = SgemmOrder::jpi;
  int threads = 1;
};

// The kernels, callable directly (tests, benchmarks).
void sgemm_naive(SgemmArgs& args);  // ijk: one dot product per element
void sgemm_ikj(SgemmArgs& args);    // row-streaming: C[i,:] += A[i,p] * B[p,:]
// Throws std::invalid_argument for an unsupported MR×NR or a zero block size.
void sgemm_packed(const SgemmPacked& plan, cpu::ThreadPool& pool, SgemmArgs& args);
// Accumulates in double (products of two floats are exact in double); rows in parallel.
void sgemm_reference(cpu::ThreadPool& pool, SgemmArgs& args);

// Deterministic inputs for m×n×k: A and B uniform in [-1, 1), C zero.
SgemmArgs make_sgemm_args(std::size_t m, std::size_t n, std::size_t k);

std::unique_ptr<Op<SgemmArgs>> make_sgemm_op_typed(cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_sgemm_op(cpu::ThreadPool& pool);

}  // namespace tunekit::kernels
