// The CPU calibration probe: an FMA micro-kernel with independent accumulator chains, a
// streaming read over a working set, a STREAM-like triad and an empty parallel dispatch.
// Compiled for this machine's ISA (see src/CMakeLists.txt) so the peak is the kernels' peak.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "tunekit/calibration.hpp"
#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {

// Eight floats, as the built-in kernels use (GCC/Clang extension).
using V8 = float __attribute__((vector_size(32)));

#if defined(__AVX__)
constexpr int kLanes = 8;  // one instruction per V8 operation
#else
constexpr int kLanes = 4;  // V8 splits into two SSE instructions
#endif

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Keeps results alive without printing them.
std::atomic<float> sink{0};

template <int C>
float fma_chains(long iterations) {
  V8 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = V8{} + static_cast<float>(c) * 1e-3f;
  const V8 mul = V8{} + 0.999999f;
  const V8 add = V8{} + 1e-7f;
  for (long i = 0; i < iterations; ++i) {
    // Contracted into one FMA each; the runtime trip count keeps the loop from being folded,
    // and the accumulators stay in registers.
    for (int c = 0; c < C; ++c) acc[c] = acc[c] * mul + add;
  }
  float s = 0;
  for (int c = 0; c < C; ++c)
    for (int l = 0; l < 8; ++l) s += acc[c][l];
  return s;
}

float run_chains(int chains, long iterations) {
  switch (chains) {
    case 1:
      return fma_chains<1>(iterations);
    case 2:
      return fma_chains<2>(iterations);
    case 4:
      return fma_chains<4>(iterations);
    case 6:
      return fma_chains<6>(iterations);
    case 8:
      return fma_chains<8>(iterations);
    case 10:
      return fma_chains<10>(iterations);
    case 12:
      return fma_chains<12>(iterations);
    case 16:
      return fma_chains<16>(iterations);
    default:
      throw std::invalid_argument("calibration: unsupported chain count");
  }
}

class CpuProbe final : public CalibrationProbe {
 public:
  CpuProbe(ThreadPool& pool, double seconds) : pool_(pool), seconds_(seconds) {
    cache_hint_ = host_identity().l3_bytes;
  }
  int max_threads() const override { return pool_.size(); }
  int simd_lanes() const override { return kLanes; }
  std::uint64_t cache_hint_bytes() const override { return cache_hint_; }

  double fma_flops(int threads, int chains) override {
    // Iterations for about one reading on one thread, from a short probe.
    long iterations = 1 << 12;
    double t = 0;
    while ((t = time_fma(1, chains, iterations)) < seconds_ / 8) iterations *= 2;
    iterations = static_cast<long>(static_cast<double>(iterations) * seconds_ / t) + 1;
    const double wall = time_fma(threads, chains, iterations);
    return 16.0 * chains * static_cast<double>(iterations) * threads / wall;
  }

  double read_bandwidth(std::size_t bytes) override {
    const std::size_t vectors = std::max<std::size_t>(8, bytes / sizeof(V8)) / 8 * 8;
    if (read_buffer_.size() < vectors) read_buffer_.assign(vectors, V8{} + 1.0f);
    const V8* data = read_buffer_.data();
    read_pass(data, vectors);  // warm: the set is resident where it fits
    long passes = 0;
    const auto start = Clock::now();
    double t = 0;
    do {
      read_pass(data, vectors);
      ++passes;
    } while ((t = since(start)) < seconds_);
    return static_cast<double>(passes) * static_cast<double>(vectors * sizeof(V8)) / t;
  }

  double triad_bandwidth(std::size_t bytes, int threads) override {
    const std::size_t n = std::max<std::size_t>(1024, bytes / 3 / sizeof(float));
    if (a_.size() != n) {
      a_.assign(n, 0.0f);
      b_.assign(n, 1.0f);
      c_.assign(n, 2.0f);
    }
    const std::size_t chunks = static_cast<std::size_t>(std::max(1, threads)) * 4;
    auto pass = [&] {
      pool_.parallel_for(chunks, threads, [&](std::size_t chunk) {
        const std::size_t lo = n * chunk / chunks, hi = n * (chunk + 1) / chunks;
        float* __restrict a = a_.data();
        const float* __restrict b = b_.data();
        const float* __restrict c = c_.data();
        for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + 0.5f * c[i];
      });
    };
    pass();  // first touch and warm-up
    long passes = 0;
    const auto start = Clock::now();
    double t = 0;
    do {
      pass();
      ++passes;
    } while ((t = since(start)) < seconds_ || passes < 2);
    sink.store(a_[n / 2], std::memory_order_relaxed);
    return static_cast<double>(passes) * 3.0 * static_cast<double>(n * sizeof(float)) / t;
  }

  double dispatch_seconds() override {
    const int threads = pool_.size();
    auto dispatch = [&] { pool_.parallel_for(threads, threads, [](std::size_t) {}); };
    dispatch();
    long count = 0;
    const auto start = Clock::now();
    double t = 0;
    do {
      dispatch();
      ++count;
    } while ((t = since(start)) < seconds_);
    return t / static_cast<double>(count);
  }

 private:
  double time_fma(int threads, int chains, long iterations) {
    const auto start = Clock::now();
    if (threads <= 1) {
      sink.store(run_chains(chains, iterations), std::memory_order_relaxed);
    } else {
      pool_.parallel_for(threads, threads, [&](std::size_t) {
        sink.store(run_chains(chains, iterations), std::memory_order_relaxed);
      });
    }
    return since(start);
  }

  static void read_pass(const V8* data, std::size_t vectors) {
    V8 acc[8] = {};
    for (std::size_t i = 0; i < vectors; i += 8)
      for (int c = 0; c < 8; ++c) acc[c] += data[i + c];
    V8 s = acc[0];
    for (int c = 1; c < 8; ++c) s += acc[c];
    sink.store(s[0], std::memory_order_relaxed);
  }

  ThreadPool& pool_;
  double seconds_;
  std::uint64_t cache_hint_ = 0;
  std::vector<V8> read_buffer_;
  std::vector<float> a_, b_, c_;
};

}  // namespace

std::unique_ptr<CalibrationProbe> make_calibration_probe(ThreadPool& pool,
                                                         double seconds_per_reading) {
  return std::make_unique<CpuProbe>(pool, seconds_per_reading);
}

}  // namespace tunekit::cpu
