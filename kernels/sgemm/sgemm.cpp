// sgemm: the kernels (naive, ikj, packed BLIS-style variants, OpenBLAS), the reference, the
// space and the op.
#include "sgemm/sgemm.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "work_models.hpp"

namespace tunekit::kernels {
namespace {

// Eight floats in one AVX register (two SSE registers without AVX), sixteen in one AVX-512
// register (two AVX registers without it); GCC/Clang extension.
using V8 = float __attribute__((vector_size(32)));
using V16 = float __attribute__((vector_size(64)));

// By reference: passing or returning vectors by value changes the ABI without AVX (-Wpsabi).
template <class V>
void load(V& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}
template <class V>
void store(float* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

// A float buffer aligned to a cache line, uninitialised.
class Buffer {
 public:
  explicit Buffer(std::size_t count)
      : data_(static_cast<float*>(::operator new[](count * sizeof(float), kAlign))) {}
  ~Buffer() { ::operator delete[](data_, kAlign); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* data() { return data_; }

 private:
  static constexpr std::align_val_t kAlign{64};
  float* data_;
};

// Packs rows [0, mc) × columns [0, kc) of A (leading dimension lda) into slivers of MR rows,
// column by column: A[s + i][p] goes to out[s*kc + p*MR + i] for the sliver starting at row
// s; rows past mc are zero.
template <int MR>
void pack_a(const float* a, std::size_t lda, std::size_t mc, std::size_t kc, float* out) {
  for (std::size_t s = 0; s < mc; s += MR) {
    const std::size_t rows = std::min<std::size_t>(MR, mc - s);
    if (rows == MR) {
      for (std::size_t p = 0; p < kc; ++p) {
        for (int i = 0; i < MR; ++i) out[p * MR + i] = a[(s + i) * lda + p];
      }
    } else {
      for (std::size_t p = 0; p < kc; ++p) {
        for (std::size_t i = 0; i < MR; ++i)
          out[p * MR + i] = i < rows ? a[(s + i) * lda + p] : 0.0f;
      }
    }
    out += MR * kc;
  }
}

// Packs one sliver of NR columns starting at column s of the kc × nc panel of B: element
// B[p][s + j] goes to out[p*NR + j]; columns past nc are zero.
template <int NR>
void pack_b_sliver(const float* b, std::size_t ldb, std::size_t kc, std::size_t nc, std::size_t s,
                   float* out) {
  const std::size_t cols = std::min<std::size_t>(NR, nc - s);
  if (cols == NR) {
    for (std::size_t p = 0; p < kc; ++p)
      std::memcpy(out + p * NR, b + p * ldb + s, NR * sizeof(float));
  } else {
    for (std::size_t p = 0; p < kc; ++p) {
      for (std::size_t j = 0; j < NR; ++j) out[p * NR + j] = j < cols ? b[p * ldb + s + j] : 0.0f;
    }
  }
}

template <int NR>
void pack_b(const float* b, std::size_t ldb, std::size_t kc, std::size_t nc, float* out) {
  for (std::size_t s = 0; s < nc; s += NR) pack_b_sliver<NR>(b, ldb, kc, nc, s, out + s * kc);
}

// C[0:mr, 0:nr] (=|+=) Apanel · Bpanel over kc, with MR×NR accumulators held in registers
// (NR/W vectors of W lanes per row). Partial tiles (mr < MR or nr < NR) are computed in full
// (the panels are zero-padded) and written through a temporary, so nothing outside C's tile
// is touched.
template <int MR, int NR, class V, int W>
void micro_kernel_lanes(std::size_t kc, const float* __restrict a, const float* __restrict b,
                        float* c, std::size_t ldc, std::size_t mr, std::size_t nr,
                        bool accumulate) {
  static_assert(NR % W == 0, "NR must be a multiple of the vector width");
  constexpr int NV = NR / W;
  V acc[MR][NV];
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) acc[i][v] = V{};
  }
  for (std::size_t p = 0; p < kc; ++p) {
    V bv[NV];
    for (int v = 0; v < NV; ++v) load(bv[v], b + p * NR + v * W);
    for (int i = 0; i < MR; ++i) {
      const float av = a[p * MR + i];
      for (int v = 0; v < NV; ++v) acc[i][v] += av * bv[v];
    }
  }
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; ++i) {
      for (int v = 0; v < NV; ++v) {
        float* dst = c + i * ldc + v * W;
        if (accumulate) {
          V old;
          load(old, dst);
          acc[i][v] += old;
        }
        store(dst, acc[i][v]);
      }
    }
    return;
  }
  float tile[MR * NR];
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) store(tile + i * NR + v * W, acc[i][v]);
  }
  for (std::size_t i = 0; i < mr; ++i) {
    for (std::size_t j = 0; j < nr; ++j) {
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * NR + j] : tile[i * NR + j];
    }
  }
}

// NR = 32 runs on 16-lane vectors, every other NR on 8-lane ones.
template <int MR, int NR>
void micro_kernel(std::size_t kc, const float* __restrict a, const float* __restrict b, float* c,
                  std::size_t ldc, std::size_t mr, std::size_t nr, bool accumulate) {
  if constexpr (NR % 32 == 0) {
    micro_kernel_lanes<MR, NR, V16, 16>(kc, a, b, c, ldc, mr, nr, accumulate);
  } else {
    micro_kernel_lanes<MR, NR, V8, 8>(kc, a, b, c, ldc, mr, nr, accumulate);
  }
}

// C[0:mc, 0:nc] (=|+=) packed A block · packed B panel.
template <int MR, int NR>
void macro_kernel(std::size_t mc, std::size_t nc, std::size_t kc, const float* apack,
                  const float* bpack, float* c, std::size_t ldc, bool accumulate) {
  for (std::size_t jr = 0; jr < nc; jr += NR) {
    const std::size_t nr = std::min<std::size_t>(NR, nc - jr);
    for (std::size_t ir = 0; ir < mc; ir += MR) {
      const std::size_t mr = std::min<std::size_t>(MR, mc - ir);
      micro_kernel<MR, NR>(kc, apack + ir * kc, bpack + jr * kc, c + ir * ldc + jr, ldc, mr, nr,
                           accumulate);
    }
  }
}

template <int MR, int NR>
void packed_jpi(const SgemmPacked& plan, cpu::ThreadPool& pool, SgemmArgs& args) {
  const std::size_t m = args.m, n = args.n, k = args.k;
  const float* a = args.a.data();
  const float* b = args.b.data();
  float* c = args.c.data();
  const std::size_t mc_max = round_up(std::min(plan.mc, m), MR);
  const std::size_t kc_max = std::min(plan.kc, k);
  const std::size_t nc_max = round_up(std::min(plan.nc, n), NR);
  const std::size_t ic_blocks = ceil_div(m, plan.mc);
  // One A buffer per ic block (a task's own), one B panel shared read-only by the ic tasks.
  Buffer apack(ic_blocks * mc_max * kc_max);
  Buffer bpack(kc_max * nc_max);
  for (std::size_t jc = 0; jc < n; jc += plan.nc) {
    const std::size_t nc = std::min(plan.nc, n - jc);
    for (std::size_t pc = 0; pc < k; pc += plan.kc) {
      const std::size_t kc = std::min(plan.kc, k - pc);
      const float* bsrc = b + pc * n + jc;
      float* bdst = bpack.data();
      run_tasks(pool, ceil_div(nc, NR), plan.threads, [&](std::size_t s) {
        pack_b_sliver<NR>(bsrc, n, kc, nc, s * NR, bdst + s * NR * kc);
      });
      run_tasks(pool, ic_blocks, plan.threads, [&](std::size_t t) {
        const std::size_t ic = t * plan.mc;
        const std::size_t mc = std::min(plan.mc, m - ic);
        float* mine = apack.data() + t * mc_max * kc_max;
        pack_a<MR>(a + ic * k + pc, k, mc, kc, mine);
        macro_kernel<MR, NR>(mc, nc, kc, mine, bdst, c + ic * n + jc, n, pc != 0);
      });
    }
  }
}

template <int MR, int NR>
void packed_ijp(const SgemmPacked& plan, cpu::ThreadPool& pool, SgemmArgs& args) {
  const std::size_t m = args.m, n = args.n, k = args.k;
  const float* a = args.a.data();
  const float* b = args.b.data();
  float* c = args.c.data();
  const std::size_t mc_max = round_up(std::min(plan.mc, m), MR);
  const std::size_t kc_max = std::min(plan.kc, k);
  const std::size_t nc_max = round_up(std::min(plan.nc, n), NR);
  const std::size_t jc_blocks = ceil_div(n, plan.nc);
  const std::size_t tiles = ceil_div(m, plan.mc) * jc_blocks;
  run_tasks(pool, tiles, plan.threads, [&](std::size_t t) {
    const std::size_t ic = t / jc_blocks * plan.mc;
    const std::size_t jc = t % jc_blocks * plan.nc;
    const std::size_t mc = std::min(plan.mc, m - ic);
    const std::size_t nc = std::min(plan.nc, n - jc);
    Buffer apack(mc_max * kc_max);
    Buffer bpack(kc_max * nc_max);
    for (std::size_t pc = 0; pc < k; pc += plan.kc) {
      const std::size_t kc = std::min(plan.kc, k - pc);
      pack_a<MR>(a + ic * k + pc, k, mc, kc, apack.data());
      pack_b<NR>(b + pc * n + jc, n, kc, nc, bpack.data());
      macro_kernel<MR, NR>(mc, nc, kc, apack.data(), bpack.data(), c + ic * n + jc, n, pc != 0);
    }
  });
}

template <int MR, int NR>
void packed(const SgemmPacked& plan, cpu::ThreadPool& pool, SgemmArgs& args) {
  switch (plan.order) {
    case SgemmOrder::jpi:
      return packed_jpi<MR, NR>(plan, pool, args);
    case SgemmOrder::ijp:
      return packed_ijp<MR, NR>(plan, pool, args);
  }
  throw std::invalid_argument("sgemm: unknown loop order");
}

std::size_t sgemm_dimension(const Key& key, std::string_view name) {
  return key_dimension(key, name, "sgemm", kSgemmMaxDim);
}

}  // namespace

std::string_view to_string(SgemmOrder order) {
  switch (order) {
    case SgemmOrder::jpi:
      return "jpi";
    case SgemmOrder::ijp:
      return "ijp";
  }
  return "?";
}

void sgemm_naive(SgemmArgs& args) {
  const std::size_t m = args.m, n = args.n, k = args.k;
  const float* a = args.a.data();
  const float* b = args.b.data();
  float* c = args.c.data();
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::size_t p = 0; p < k; ++p) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
  }
}

void sgemm_ikj(SgemmArgs& args) {
  const std::size_t m = args.m, n = args.n, k = args.k;
  const float* a = args.a.data();
  const float* b = args.b.data();
  float* c = args.c.data();
  for (std::size_t i = 0; i < m; ++i) {
    float* __restrict crow = c + i * n;
    std::fill(crow, crow + n, 0.0f);
    for (std::size_t p = 0; p < k; ++p) {
      const float aip = a[i * k + p];
      const float* __restrict brow = b + p * n;
      for (std::size_t j = 0; j < n; ++j) crow[j] += aip * brow[j];
    }
  }
}

void sgemm_packed(const SgemmPacked& plan, cpu::ThreadPool& pool, SgemmArgs& args) {
  if (plan.mc == 0 || plan.kc == 0 || plan.nc == 0) {
    throw std::invalid_argument("sgemm: cache block sizes must be positive");
  }
  if (plan.threads < 1) throw std::invalid_argument("sgemm: threads must be positive");
  if (plan.mr == 4 && plan.nr == 8) return packed<4, 8>(plan, pool, args);
  if (plan.mr == 4 && plan.nr == 16) return packed<4, 16>(plan, pool, args);
  if (plan.mr == 6 && plan.nr == 16) return packed<6, 16>(plan, pool, args);
  if (plan.mr == 8 && plan.nr == 8) return packed<8, 8>(plan, pool, args);
  if (plan.mr == 6 && plan.nr == 32) return packed<6, 32>(plan, pool, args);
  if (plan.mr == 8 && plan.nr == 32) return packed<8, 32>(plan, pool, args);
  if (plan.mr == 12 && plan.nr == 32) return packed<12, 32>(plan, pool, args);
  throw std::invalid_argument("sgemm: unsupported register block " + std::to_string(plan.mr) + "x" +
                              std::to_string(plan.nr));
}

namespace {
// Serialises tunekit's own OpenBLAS calls and their thread-count changes (sgemm_openblas).
std::mutex openblas_calls;
// Whether OpenBLAS's threads were stopped since the last threaded call — by openblas_quiesce,
// or by a fork: OpenBLAS's own fork handler stops them in the forking process, and a forked
// child has none — so the next one starts them again, and they are spread. Atomic: the fork
// handlers set it without the lock.
std::atomic<bool> openblas_stopped{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a fork handler");

// After every fork, in the parent and in the child: a worker process's first threaded call
// (and the host's next) restarts OpenBLAS's threads, which the kernel often leaves on the
// caller's CPU unless spread (6 to 9 of 10 forked children did; docs/performance.md "Points
// that compute the same thing, losers cut on their validation runs").
void note_openblas_forks() {
  static std::once_flag once;
  std::call_once(once, [] {
    const auto stopped = [] { openblas_stopped.store(true, std::memory_order_relaxed); };
    ::pthread_atfork(nullptr, stopped, stopped);
  });
}

// The threads in `after` that are not in `before`.
std::vector<int> started_since(std::vector<int> before, const std::vector<int>& after) {
  std::sort(before.begin(), before.end());
  std::vector<int> started;
  for (const int id : after)
    if (!std::binary_search(before.begin(), before.end(), id)) started.push_back(id);
  return started;
}
}  // namespace

void sgemm_openblas(int threads, SgemmArgs& args) {
  if (threads < 1) throw std::invalid_argument("sgemm: threads must be positive");
  const auto m = static_cast<blasint>(args.m), n = static_cast<blasint>(args.n),
             k = static_cast<blasint>(args.k);
  // OpenBLAS's thread count is one process-wide setting, and Debian 12's OpenBLAS (0.3.21)
  // has no per-call or per-thread one. Changing it while another thread's call is inside
  // OpenBLAS races with that call, so every call from here sets it and runs under one mutex:
  // tunekit's own OpenBLAS launches never interleave (concurrent callers of this candidate
  // queue up). A caller's direct OpenBLAS calls from other threads at the same time are not
  // covered: they run with the count the last launch here set.
  std::lock_guard lock(openblas_calls);
  // A threaded call after openblas_quiesce starts the helpers again, often on this thread's
  // CPU: both then share one core (2 threads at 256³ read 350 µs instead of 197) until the
  // scheduler moves one, which in a window of a few dozen calls it mostly does not. They are
  // spread at once, as a process calling OpenBLAS back to back has them (docs/performance.md).
  // Taken at once: a fork between this read and the call's end marks a stop again.
  const bool restart = threads > 1 && openblas_stopped.exchange(false, std::memory_order_relaxed);
  const std::vector<int> before = restart ? cpu::thread_ids() : std::vector<int>{};
  if (openblas_get_num_threads() != threads) openblas_set_num_threads(threads);
  // beta = 0: OpenBLAS stores zeros before accumulating, so whatever C held (NaN poison
  // included) is overwritten.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, args.a.data(), k,
              args.b.data(), n, 0.0f, args.c.data(), n);
  if (restart) {
    // Once per stop, even where the call was too small to start threads: else every call of
    // such a window would list the threads twice (tens of µs on a call of a few). The tuner
    // stops the threads after each window of one shape, so the next restart is spread.
    cpu::spread_threads(started_since(before, cpu::thread_ids()));
  }
}

void openblas_quiesce() {
  // Not in OpenBLAS's headers, but exported by its threaded builds (its fork handler calls
  // it; the next threaded call starts the threads again). Looked up, not linked: a serial
  // build of the library, another Debian alternative of libopenblas.so.0, lacks it.
  using Shutdown = int (*)();
  static const auto stop_threads =
      reinterpret_cast<Shutdown>(::dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
  if (!stop_threads) return;
  std::lock_guard lock(openblas_calls);
  stop_threads();
  openblas_stopped.store(true, std::memory_order_relaxed);
}

std::string openblas_description() {
  static const char* const parallel[] = {"sequential", "pthreads", "OpenMP"};
  const int model = openblas_get_parallel();
  std::string text = openblas_get_corename();
  text += " (";
  text += openblas_get_config();
  text += "), ";
  text += model >= 0 && model <= 2 ? parallel[model] : "unknown threading";
  return text;
}

void sgemm_reference(cpu::ThreadPool& pool, SgemmArgs& args) {
  const std::size_t m = args.m, n = args.n, k = args.k;
  const float* a = args.a.data();
  const float* b = args.b.data();
  float* c = args.c.data();
  run_tasks(pool, m, pool.size(), [&](std::size_t i) {
    std::vector<double> acc(n, 0.0);
    for (std::size_t p = 0; p < k; ++p) {
      const double aip = a[i * k + p];
      for (std::size_t j = 0; j < n; ++j) acc[j] += aip * static_cast<double>(b[p * n + j]);
    }
    for (std::size_t j = 0; j < n; ++j) c[i * n + j] = static_cast<float>(acc[j]);
  });
}

SgemmArgs make_sgemm_args(std::size_t m, std::size_t n, std::size_t k, int input_set) {
  SgemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a.resize(m * k);
  args.b.resize(k * n);
  args.c.assign(m * n, 0.0f);
  std::mt19937 rng = input_rng(0x5eed0001u, input_set);
  fill_uniform(args.a, rng, -1.0f, 2.0f);  // uniform in [-1, 1)
  fill_uniform(args.b, rng, -1.0f, 2.0f);
  return args;
}

bool sgemm_native_lanes(int lanes) {
#if defined(__AVX512F__)
  return lanes <= 16;
#else
  return lanes <= 8;
#endif
}

Space sgemm_space(int pool_threads) {
  auto ints = [](std::initializer_list<std::int64_t> list) {
    std::vector<Value> values;
    for (std::int64_t v : list) values.emplace_back(v);
    return values;
  };
  // The register blocks this ISA runs natively. Their values are listed widest first (0, the
  // pinned value, before them), so the enumeration order — the tie-break order, and the order
  // an exhaustive search under a budget visits — starts with the largest register tiles.
  std::vector<std::int64_t> mr_list, nr_list;
  std::string micros;  // one condition: "(mr == 12 and nr == 32) or ..."
  for (const SgemmMicro& micro : kSgemmMicros) {
    if (!sgemm_native_lanes(micro.lanes)) continue;
    if (std::find(mr_list.begin(), mr_list.end(), micro.mr) == mr_list.end())
      mr_list.push_back(micro.mr);
    if (std::find(nr_list.begin(), nr_list.end(), micro.nr) == nr_list.end())
      nr_list.push_back(micro.nr);
    micros += (micros.empty() ? "" : " or ") + std::string("(mr == ") + std::to_string(micro.mr) +
              " and nr == " + std::to_string(micro.nr) + ")";
  }
  std::vector<Value> mrs{Value(std::int64_t{0})}, nrs{Value(std::int64_t{0})};
  std::sort(mr_list.rbegin(), mr_list.rend());
  std::sort(nr_list.rbegin(), nr_list.rend());
  for (std::int64_t v : mr_list) mrs.emplace_back(v);
  for (std::int64_t v : nr_list) nrs.emplace_back(v);
  std::vector<Value> threads;
  for (int t = 1; t <= std::max(1, pool_threads); ++t) threads.emplace_back(std::int64_t{t});
  Space space;
  // The enumeration order is the tie-break order (lower wins) and the order an exhaustive
  // search visits: the default, then the library, then the own kernels, the slowest last.
  space.param("algo", {Value("ikj"), Value("openblas"), Value("packed"), Value("naive")})
      .param("mr", std::move(mrs))
      .param("nr", std::move(nrs))
      // Cache blocks: MC rows of A (an MC×KC block per thread, L2), KC (a KC×NR sliver of B
      // in L1 per micro-tile), NC columns of B (the shared KC×NC panel, L3).
      .param("mc", ints({0, 48, 96, 144, 192}))
      .param("kc", ints({0, 128, 256, 384, 512}))
      .param("nc", ints({0, 512, 1024, 2048, 4096}))
      .param("order", {Value("none"), Value("jpi"), Value("ijp")})
      .param("threads", std::move(threads))
      // Conditional parameters: the packed ones only for packed (pinned to 0 / 'none'
      // elsewhere), threads only for packed and openblas (ikj and naive run on the caller).
      .constraint("algo != 'packed' or " + micros)
      .constraint("algo == 'packed' or (mr == 0 and nr == 0)")
      .constraint("algo != 'packed' or (mc > 0 and mc % mr == 0)")
      .constraint("algo == 'packed' or mc == 0")
      .constraint("(algo == 'packed') == (kc > 0)")
      .constraint("algo != 'packed' or (nc > 0 and nc % nr == 0)")
      .constraint("algo == 'packed' or nc == 0")
      .constraint("(algo == 'packed') == (order != 'none')")
      .constraint("algo == 'packed' or algo == 'openblas' or threads == 1");
  return space;
}

Config sgemm_default_config() {
  return Config{{"algo", "ikj"}, {"mr", 0}, {"nr", 0},         {"mc", 0},
                {"kc", 0},       {"nc", 0}, {"order", "none"}, {"threads", 1}};
}

namespace {

int config_int(const Config& config, std::string_view name) {
  return static_cast<int>(config[name].as_int());
}

// Whether a point needs m·n·k within the naive loop's bound.
std::optional<std::string> sgemm_eligible(const Key& key, const Config& config) {
  if (config["algo"].as_string() != "naive") return std::nullopt;
  // It strides down B's columns at about 1 GFLOP/s: one call at 8192³ would take ten minutes
  // or more. Past 1024³ it declines, so a search stays bounded.
  const double work = static_cast<double>(key.integer("m")) *
                      static_cast<double>(key.integer("n")) * static_cast<double>(key.integer("k"));
  if (work > 0x1p30) return "the naive loop is kept to m·n·k <= 1024³ (too slow beyond)";
  return std::nullopt;
}

// What a packed point computes for a key: a cache block at least as large as the dimension it
// blocks is one block of the whole dimension (packed_jpi and packed_ijp take min(block, dim)
// and loop once), so every such value computes the same thing. At 128³ the 1792 packed points
// are 84 computations (mc 144 and 192 are one; every kc and every nc is one).
Config sgemm_effective(const Key& key, const Config& config) {
  if (config["algo"].as_string() != "packed") return config;
  Config effective = config;
  auto clip = [&](const char* block, const char* dimension) {
    effective.set(block, std::min(config[block].as_int(), key.integer(dimension)));
  };
  clip("mc", "m");
  clip("kc", "k");
  clip("nc", "n");
  return effective;
}

}  // namespace

std::unique_ptr<Op<SgemmArgs>> make_sgemm_op_typed(cpu::ThreadPool& pool) {
  // Schema 2: the candidates are the points of one space (schema 1 was a list).
  auto op = std::make_unique<Op<SgemmArgs>>("sgemm", 2);
  op->describe(
        "single-precision matrix multiply C[m×n] = A[m×k]·B[k×n], row-major; one space from a "
        "naive loop to packed, register-blocked, multithreaded BLIS-style kernels (micro-kernel "
        "× blocking × loop order × threads) and OpenBLAS's cblas_sgemm (threads)")
      .key_field({"m", Value::Type::integer, "rows of A and C", std::nullopt, 1, kSgemmMaxDim})
      .key_field({"n", Value::Type::integer, "columns of B and C", std::nullopt, 1, kSgemmMaxDim})
      .key_field(
          {"k", Value::Type::integer, "columns of A, rows of B", std::nullopt, 1, kSgemmMaxDim})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key({"m", "n", "k", "dtype"},
           [](const SgemmArgs& x) {
             return KeyValues{static_cast<std::int64_t>(x.m), static_cast<std::int64_t>(x.n),
                              static_cast<std::int64_t>(x.k), "f32"};
           })
      .inputs([](const Key& key, int input_set) {
        require_f32(key, "sgemm");
        return make_sgemm_args(sgemm_dimension(key, "m"), sgemm_dimension(key, "n"),
                               sgemm_dimension(key, "k"), input_set);
      })
      .outputs([](SgemmArgs& x) { return std::vector<OutputView>{OutputView::of(std::span(x.c))}; })
      // Every candidate overwrites all of it and reads none of it (validation poisons it first):
      // not copied back before each window, only the inputs are.
      .write_only(&SgemmArgs::c)
      .reference([&pool](SgemmArgs& x) { sgemm_reference(pool, x); })
      // Each element is a k-term dot product of values in [-1, 1): a float sum's rounding error
      // grows with k, and elements near zero make a relative bound alone useless.
      .tolerance([](const Key& key) {
        const double k = static_cast<double>(key.integer("k"));
        return Tolerance{0x1p-20 * k, 0x1p-17};
      });
  op->space(sgemm_space(pool.size()), [&pool](const Config& config) -> Op<SgemmArgs>::Fn {
    const std::string& algo = config["algo"].as_string();
    if (algo == "ikj") return [](SgemmArgs& x) { sgemm_ikj(x); };
    if (algo == "naive") return [](SgemmArgs& x) { sgemm_naive(x); };
    const int threads = config_int(config, "threads");
    if (algo == "openblas") return [threads](SgemmArgs& x) { sgemm_openblas(threads, x); };
    const SgemmPacked plan{config_int(config, "mr"),
                           config_int(config, "nr"),
                           static_cast<std::size_t>(config_int(config, "mc")),
                           static_cast<std::size_t>(config_int(config, "kc")),
                           static_cast<std::size_t>(config_int(config, "nc")),
                           config["order"].as_string() == "ijp" ? SgemmOrder::ijp : SgemmOrder::jpi,
                           threads};
    return [plan, &pool](SgemmArgs& x) { sgemm_packed(plan, pool, x); };
  });
  // Every point but ikj sums each dot product in a different order (or contracts differently
  // into FMAs) than ikj: reassociates.
  op->numerics([](const Config& config) {
    return config["algo"].as_string() == "ikj" ? Numerics::bitwise : Numerics::reassociates;
  });
  op->eligible(sgemm_eligible);
  op->effective_config(sgemm_effective);
  op->work(sgemm_work);  // the cost model's view of each point (work_models.cpp)
  op->default_config(sgemm_default_config());
  note_openblas_forks();
  // OpenBLAS at every thread count is measured in every search, right after the default: the
  // pick is never slower than the library (TunableOp's library-versus-generated choice).
  std::vector<Config> library;
  const Enumeration points = sgemm_space(pool.size()).enumerate();
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points.config(i)["algo"].as_string() == "openblas") library.push_back(points.config(i));
  op->anchors(std::move(library));
  // OpenBLAS's threads spin ~0.1 s after each call and would take a core from the next
  // window; stopped after its windows instead of waited for (docs/performance.md).
  op->quiesce([](const Candidate& c) {
    if (c.config["algo"].as_string() == "openblas") openblas_quiesce();
  });
  return op;
}

std::unique_ptr<OpBase> make_sgemm_op(cpu::ThreadPool& pool) {
  return make_sgemm_op_typed(pool);
}

}  // namespace tunekit::kernels
