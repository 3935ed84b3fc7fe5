// sgemm: row-major single-precision matrix multiply C[m×n] = A[m×k]·B[k×n], the built-in
// CPU op with the widest candidate spread: one space over a naive dot-product loop, the
// row-streaming ikj loop (the default), BLIS-style packed, register-blocked, multithreaded
// kernels (every micro-kernel × cache blocking × loop order × thread count) and OpenBLAS's
// cblas_sgemm as a library candidate (threads as its parameter). Private to kernels/ and its
// tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
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

// The register blocks (micro-kernels) sgemm_packed supports, MR×NR: NR 8 and 16 run on
// 8-lane vectors (AVX), NR = 32 on 16-lane vectors (AVX-512; two AVX halves elsewhere).
struct SgemmMicro {
  int mr, nr;
  int lanes;
};
inline constexpr SgemmMicro kSgemmMicros[] = {{4, 8, 8},   {4, 16, 8},  {6, 16, 8},  {8, 8, 8},
                                              {6, 32, 16}, {8, 32, 16}, {12, 32, 16}};
// Whether the kernels' ISA (what sgemm.cpp is compiled for, not the caller's) holds a
// `lanes`-wide f32 vector in one register: the space offers only those micro-kernels (a
// 16-lane tile without AVX-512 is two AVX halves per vector and spills its accumulators).
// Every micro-kernel stays callable through sgemm_packed.
bool sgemm_native_lanes(int lanes);

// One point of the packed space.
struct SgemmPacked {
  int mr = 6;  // register block rows and columns: one of kSgemmMicros
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
// OpenBLAS's cblas_sgemm on `threads` threads (openblas_set_num_threads before the call when
// OpenBLAS's process-wide count differs; tunekit's own OpenBLAS calls are serialised by a
// mutex, since that count is global: see sgemm.cpp).
void sgemm_openblas(int threads, SgemmArgs& args);
// Stops OpenBLAS's worker threads (they spin ~0.1 s after each call); its next threaded call
// starts them again. Does nothing where the library has no such threads.
void openblas_quiesce();
// Which OpenBLAS runs: "<core name> (<build config>), <parallel model>".
std::string openblas_description();
// Accumulates in double (products of two floats are exact in double); rows in parallel.
void sgemm_reference(cpu::ThreadPool& pool, SgemmArgs& args);

// Deterministic inputs for m×n×k: A and B uniform in [-1, 1), C zero; input set 1 has other
// values.
SgemmArgs make_sgemm_args(std::size_t m, std::size_t n, std::size_t k, int input_set = 0);

// The op's space for a pool of `pool_threads` threads: parameters algo (ikj, openblas, packed,
// naive, in enumeration order), mr, nr, mc, kc, nc, order, threads; the packed parameters are
// pinned to 0 / "none" for the other algorithms, threads to 1 for ikj and naive.
Space sgemm_space(int pool_threads);
// The default: ikj (its parameters pinned).
Config sgemm_default_config();

std::unique_ptr<Op<SgemmArgs>> make_sgemm_op_typed(cpu::ThreadPool& pool);
std::unique_ptr<OpBase> make_sgemm_op(cpu::ThreadPool& pool);

}  // namespace tunekit::kernels
