// sgemm: the candidates (naive, ikj, packed BLIS-style variants), the reference and the op.
#include "sgemm/sgemm.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "common.hpp"
#include "work_models.hpp"

namespace tunekit::kernels {
namespace {

// Eight floats in one AVX register (two SSE registers without AVX); GCC/Clang extension.
using V8 = float __attribute__((vector_size(32)));

// By reference: passing or returning V8 by value changes the ABI without AVX (-Wpsabi).
void load8(V8& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}
void store8(float* p, const V8& v) {
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

// C[0:mr, 0:nr] (=|+=) Apanel · Bpanel over kc, with MR×NR accumulators held in registers.
// Partial tiles (mr < MR or nr < NR) are computed in full (the panels are zero-padded) and
// written through a temporary, so nothing outside C's tile is touched.
template <int MR, int NR>
void micro_kernel(std::size_t kc, const float* __restrict a, const float* __restrict b, float* c,
                  std::size_t ldc, std::size_t mr, std::size_t nr, bool accumulate) {
  static_assert(NR % 8 == 0, "NR must be a multiple of 8");
  constexpr int NV = NR / 8;
  V8 acc[MR][NV];
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) acc[i][v] = V8{};
  }
  for (std::size_t p = 0; p < kc; ++p) {
    V8 bv[NV];
    for (int v = 0; v < NV; ++v) load8(bv[v], b + p * NR + v * 8);
    for (int i = 0; i < MR; ++i) {
      const float av = a[p * MR + i];
      for (int v = 0; v < NV; ++v) acc[i][v] += av * bv[v];
    }
  }
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; ++i) {
      for (int v = 0; v < NV; ++v) {
        float* dst = c + i * ldc + v * 8;
        if (accumulate) {
          V8 old;
          load8(old, dst);
          acc[i][v] += old;
        }
        store8(dst, acc[i][v]);
      }
    }
    return;
  }
  float tile[MR * NR];
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) store8(tile + i * NR + v * 8, acc[i][v]);
  }
  for (std::size_t i = 0; i < mr; ++i) {
    for (std::size_t j = 0; j < nr; ++j) {
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * NR + j] : tile[i * NR + j];
    }
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

std::size_t dimension(const Key& key, std::string_view name) {
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
  if (plan.mr == 4 && plan.nr == 8) return packed<4, 8>(plan, pool, args);
  if (plan.mr == 4 && plan.nr == 16) return packed<4, 16>(plan, pool, args);
  if (plan.mr == 6 && plan.nr == 16) return packed<6, 16>(plan, pool, args);
  if (plan.mr == 8 && plan.nr == 8) return packed<8, 8>(plan, pool, args);
  throw std::invalid_argument("sgemm: unsupported register block " + std::to_string(plan.mr) + "x" +
                              std::to_string(plan.nr));
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

SgemmArgs make_sgemm_args(std::size_t m, std::size_t n, std::size_t k) {
  SgemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a.resize(m * k);
  args.b.resize(k * n);
  args.c.assign(m * n, 0.0f);
  std::mt19937 rng(0x5eed0001u);
  fill_uniform(args.a, rng, -1.0f, 2.0f);  // uniform in [-1, 1)
  fill_uniform(args.b, rng, -1.0f, 2.0f);
  return args;
}

std::unique_ptr<Op<SgemmArgs>> make_sgemm_op_typed(cpu::ThreadPool& pool) {
  auto op = std::make_unique<Op<SgemmArgs>>("sgemm", 1);
  op->describe(
        "single-precision matrix multiply C[m×n] = A[m×k]·B[k×n], row-major; candidates from a "
        "naive loop to packed, register-blocked, multithreaded BLIS-style kernels")
      .key_field({"m", Value::Type::integer, "rows of A and C", std::nullopt, 1, kSgemmMaxDim})
      .key_field({"n", Value::Type::integer, "columns of B and C", std::nullopt, 1, kSgemmMaxDim})
      .key_field(
          {"k", Value::Type::integer, "columns of A, rows of B", std::nullopt, 1, kSgemmMaxDim})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key([](const SgemmArgs& x) {
        return Key{{"m", static_cast<std::int64_t>(x.m)},
                   {"n", static_cast<std::int64_t>(x.n)},
                   {"k", static_cast<std::int64_t>(x.k)},
                   {"dtype", "f32"}};
      })
      .inputs([](const Key& key) {
        require_f32(key, "sgemm");
        return make_sgemm_args(dimension(key, "m"), dimension(key, "n"), dimension(key, "k"));
      })
      .outputs([](SgemmArgs& x) { return std::vector<OutputView>{OutputView::of(std::span(x.c))}; })
      .reference([&pool](SgemmArgs& x) { sgemm_reference(pool, x); })
      // Each element is a k-term dot product of values in [-1, 1): a float sum's rounding error
      // grows with k, and elements near zero make a relative bound alone useless.
      .tolerance([](const Key& key) {
        const double k = static_cast<double>(key.integer("k"));
        return Tolerance{0x1p-20 * k, 0x1p-17};
      });

  CandidateList<SgemmArgs> candidates(*op);
  candidates.add("ikj", Config{{"algo", "ikj"}}, Numerics::bitwise,
                 [](SgemmArgs& x) { sgemm_ikj(x); });
  // Every other candidate sums each dot product in a different order (or contracts
  // differently into FMAs) than ikj: reassociates.
  Candidate naive = make_candidate("naive", Config{{"algo", "naive"}}, Numerics::reassociates);
  // It strides down B's columns at about 1 GFLOP/s: one call at 8192³ would take ten minutes
  // or more. Past 1024³ it declines, so a search stays bounded.
  naive.eligible = [](const Key& key) -> std::optional<std::string> {
    const double work = static_cast<double>(key.integer("m")) *
                        static_cast<double>(key.integer("n")) *
                        static_cast<double>(key.integer("k"));
    if (work > 0x1p30) return "the naive loop is kept to m·n·k <= 1024³ (too slow beyond)";
    return std::nullopt;
  };
  candidates.add(std::move(naive), [](SgemmArgs& x) { sgemm_naive(x); });

  struct Micro {
    int mr, nr;
  };
  struct Blocking {
    std::size_t mc, kc, nc;
  };
  const Micro micros[] = {{4, 8}, {4, 16}, {6, 16}, {8, 8}};
  const Blocking blockings[] = {{48, 128, 512}, {96, 256, 2048}};
  const SgemmOrder orders[] = {SgemmOrder::jpi, SgemmOrder::ijp};
  for (int threads : thread_counts(pool)) {
    for (const Micro& micro : micros) {
      for (const Blocking& blocking : blockings) {
        for (SgemmOrder order : orders) {
          const SgemmPacked plan{micro.mr,    micro.nr, blocking.mc, blocking.kc,
                                 blocking.nc, order,    threads};
          const std::string name = "packed_" + std::to_string(micro.mr) + "x" +
                                   std::to_string(micro.nr) + "_mc" + std::to_string(blocking.mc) +
                                   "_kc" + std::to_string(blocking.kc) + "_nc" +
                                   std::to_string(blocking.nc) + "_" +
                                   std::string(to_string(order)) + "_t" + std::to_string(threads);
          Config config;
          config.set("algo", "packed")
              .set("mr", micro.mr)
              .set("nr", micro.nr)
              .set("mc", static_cast<std::int64_t>(blocking.mc))
              .set("kc", static_cast<std::int64_t>(blocking.kc))
              .set("nc", static_cast<std::int64_t>(blocking.nc))
              .set("order", std::string(to_string(order)))
              .set("threads", threads);
          candidates.add(name, std::move(config), Numerics::reassociates,
                         [plan, &pool](SgemmArgs& x) { sgemm_packed(plan, pool, x); });
        }
      }
    }
  }
  op->work(sgemm_work);  // the cost model's view of each candidate (work_models.cpp)
  op->default_candidate("ikj");
  return op;
}

std::unique_ptr<OpBase> make_sgemm_op(cpu::ThreadPool& pool) {
  return make_sgemm_op_typed(pool);
}

}  // namespace tunekit::kernels
