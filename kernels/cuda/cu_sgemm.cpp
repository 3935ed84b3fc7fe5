// sgemm on CUDA: a CUTLASS-style SIMT tile space (block, warp and thread tiles, warp thread
// arrangement, vector width, double buffering, split-k) over kernels/cuda/sgemm.cu, plus cuBLAS
// (cublasSgemm and cublasGemmEx with a few algorithms) as library points of the same space,
// measured in every search (anchors). Every point is validated against the CPU reference.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common.hpp"
#include "cuda/cu_common.hpp"
#include "cuda/cu_ops.hpp"
#include "cuda/sgemm_cu.hpp"
#include "sgemm/sgemm.hpp"
#include "tunekit/cuda_blas.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::kernels::cu {
namespace {

// The cuBLAS handle of an op, made by the first build step of a cuBLAS point (so a missing
// library is that point's compile_failed) and shared by every workload of the op.
class LazyBlas {
 public:
  explicit LazyBlas(std::shared_ptr<cuda::Context> context) : context_(std::move(context)) {}
  Outcome ready() {
    std::call_once(once_, [this] {
      try {
        blas_ = std::make_unique<cuda::Blas>(context_);
      } catch (const TrialError& e) {
        outcome_ = {e.status(), e.what()};
      }
    });
    return outcome_;
  }
  cuda::Blas& get() {
    if (Outcome o = ready(); !o.ok()) throw TrialError(o.status, o.message);
    return *blas_;
  }

 private:
  std::shared_ptr<cuda::Context> context_;
  std::once_flag once_;
  Outcome outcome_;
  std::unique_ptr<cuda::Blas> blas_;
};

// Inputs on the device, zero-padded (M and N to kSgemmPadMN, K to kSgemmPadK), and split-k's
// partial results when the padded result is small enough; one heap object so the host mirror
// stays where DeviceOutput points.
struct SgemmState {
  SgemmState(const std::shared_ptr<cuda::Context>& context, SgemmArgs args,
             std::shared_ptr<LazyBlas> lazy_blas)
      : host(std::move(args)),
        mp(round_up(host.m, kSgemmPadMN)),
        np(round_up(host.n, kSgemmPadMN)),
        kp(round_up(host.k, kSgemmPadK)),
        functions(context),
        a(*context, mp * kp * sizeof(float)),
        b(*context, kp * np * sizeof(float)),
        c(*context, host.c, host.m, host.n, mp, np),
        blas(std::move(lazy_blas)) {
    if (mp * np <= kSgemmSplitKMaxElements)
      w = cuda::Buffer(*context, (kSgemmMaxSplitK - 1) * mp * np * sizeof(float));
    upload_inputs();
  }
  // The host inputs to the device, padded (again, to undo a candidate that wrote them).
  void upload_inputs() {
    upload_padded(a, host.a, host.m, host.k, mp, kp);
    upload_padded(b, host.b, host.k, host.n, kp, np);
  }

  SgemmArgs host;
  std::size_t mp, np, kp;
  FunctionSet functions;
  cuda::Buffer a, b;
  DeviceOutput c;
  cuda::Buffer w;  // SPLITK - 1 partial results of mp x np; empty when split-k declines
  std::shared_ptr<LazyBlas> blas;
};

struct CuSgemmArgs {
  std::shared_ptr<SgemmState> state;
};

int param(const Config& c, const char* name) {
  return static_cast<int>(c[name].as_int());
}

// What a launch of a tile point needs.
struct TilePlan {
  int bm, bn, bk, threads, splitk;
  std::vector<std::string> options;
};

TilePlan tile_plan(const Config& c) {
  const int threads = 32 * (param(c, "BM") / param(c, "WM")) * (param(c, "BN") / param(c, "WN"));
  return {param(c, "BM"), param(c, "BN"),     param(c, "BK"),
          threads,        param(c, "SPLITK"), sgemm_options(c)};
}

void run_tile(const TilePlan& p, SgemmState& s) {
  cuda::Function& f = s.functions.get(cuda_sources::sgemm, p.options, "sgemm");
  const int ktiles = static_cast<int>(s.kp) / p.bk;
  const int per_split = (ktiles + p.splitk - 1) / p.splitk;
  const auto wstride = static_cast<long long>(s.mp * s.np);
  const int ld_a = static_cast<int>(s.kp), ld_bc = static_cast<int>(s.np);
  if (p.splitk > 1 && s.w.bytes() == 0)
    throw TrialError(Status::rejected, "split-k has no partial buffers for this shape");
  launch(f,
         {blocks(s.host.n, static_cast<std::size_t>(p.bn)),
          blocks(s.host.m, static_cast<std::size_t>(p.bm)), static_cast<unsigned>(p.splitk)},
         {static_cast<unsigned>(p.threads)}, ptr(s.a), ptr(s.b), ptr(s.c.buffer()), ptr(s.w), ld_a,
         ld_bc, ld_bc, ktiles, per_split, wstride);
  if (p.splitk == 1) return;
  cuda::Function& reduce = s.functions.get(cuda_sources::sgemm, p.options, "sgemm_reduce");
  launch(reduce, {blocks(s.host.n, 256), static_cast<unsigned>(s.host.m)}, {256}, ptr(s.c.buffer()),
         ptr(s.w), static_cast<int>(s.host.m), static_cast<int>(s.host.n), ld_bc, p.splitk - 1,
         wstride);
}

cuda::BlasAlgorithm blas_algorithm(const std::string& algo) {
  if (algo == "sgemm") return cuda::BlasAlgorithm::classic();
  if (algo == "gemmex_default") return cuda::BlasAlgorithm::ex(-1);
  const std::string prefix = "gemmex_algo";
  if (algo.rfind(prefix, 0) == 0)
    return cuda::BlasAlgorithm::ex(std::stoi(algo.substr(prefix.size())));
  throw UsageError("sgemm: unknown cuBLAS algo '" + algo + "'");
}

void run_blas(const cuda::BlasAlgorithm& algorithm, SgemmState& s) {
  const cuda::GemmShape shape{static_cast<int>(s.host.m), static_cast<int>(s.host.n),
                              static_cast<int>(s.host.k), static_cast<int>(s.kp),
                              static_cast<int>(s.np),     static_cast<int>(s.np)};
  s.blas->get().sgemm(shape, s.a, s.b, s.c.buffer(), algorithm);
}

// The cuBLAS algo values: the classic call, then cublasGemmEx with CUBLAS_GEMM_DEFAULT and a
// few explicit algorithms (on sm_80 and newer cuBLAS may treat these as the default; the
// search measures what each does).
const std::vector<std::string>& blas_algos() {
  static const std::vector<std::string> algos{"sgemm",        "gemmex_default", "gemmex_algo0",
                                              "gemmex_algo1", "gemmex_algo2",   "gemmex_algo3"};
  return algos;
}

// Split-k declines where its partial results are not kept, and where a split would get fewer
// than two BK tiles of K.
std::optional<std::string> sgemm_eligible(const Key& key, const Config& config) {
  if (config["impl"].as_string() != "tile" || config["SPLITK"].as_int() == 1) return std::nullopt;
  const auto dim = [&](const char* f) { return static_cast<std::size_t>(key.integer(f)); };
  if (round_up(dim("m"), kSgemmPadMN) * round_up(dim("n"), kSgemmPadMN) > kSgemmSplitKMaxElements)
    return "split-k is kept to results of at most 2^24 padded elements (M x N has blocks enough)";
  const auto ktiles =
      static_cast<std::int64_t>(round_up(dim("k"), kSgemmPadK)) / config["BK"].as_int();
  if (ktiles < 2 * config["SPLITK"].as_int())
    return "split-k needs at least two BK tiles of K per split";
  return std::nullopt;
}

}  // namespace

std::vector<std::string> sgemm_options(const Config& config) {
  return define_options(config, {"impl", "algo", "SPLITK"});
}

Space sgemm_space() {
  std::vector<Value> algos{Value("none")};
  for (const std::string& a : blas_algos()) algos.emplace_back(a);
  Space s;
  // The enumeration order is the tie-break order: the library first, then the tiles. Tile
  // parameters are 0 (pinned) for cuBLAS points.
  s.param("impl", {"cublas", "tile"})
      .param("algo", std::move(algos))
      .param("BM", {0, 16, 32, 64, 128, 256})
      .param("BN", {0, 32, 64, 128, 256})
      .param("WM", {0, 8, 16, 32, 64, 128})
      .param("WN", {0, 16, 32, 64, 128})
      .param("TM", {0, 2, 4, 8})
      .param("TN", {0, 2, 4, 8})
      .param("WTN", {0, 4, 8})
      .param("BK", {0, 8, 16, 32})
      .param("VW", {0, 1, 2, 4})
      .param("STAGES", {0, 1, 2})
      .param("SPLITK", {1, 2, 4})
      .constraint("(impl == 'tile') == (algo == 'none')");
  for (const char* p : {"BM", "BN", "WM", "WN", "TM", "TN", "WTN", "BK", "VW", "STAGES"})
    s.constraint(std::string("(impl == 'tile') == (") + p + " > 0)");
  // Each guard comes first: an evaluation error (a division by a pinned 0) fails a constraint.
  s.constraint("impl == 'tile' or SPLITK == 1")
      // Warps tile the block, the warp's 32 threads ((32 // WTN) x WTN) tile the warp.
      .constraint("BM == 0 or (BM % WM == 0 and BN % WN == 0)")
      .constraint("TM == 0 or WM % ((32 // WTN) * TM) == 0")
      .constraint("TN == 0 or WN % (WTN * TN) == 0")
      // 32 to 512 threads, at most 128 accumulators per thread, at most 128 x 256 per block
      // (__launch_bounds__ caps the registers at 65536 / threads: no launch fails on them).
      .constraint("BM == 0 or 32 * (BM // WM) * (BN // WN) <= 512")
      .constraint("WM * WN <= 4096")
      .constraint("BM * BN <= 32768")
      // The A and B tiles split evenly into VW-vectors among the threads, at most 32 staged
      // floats and 16 loads (each holds an address too) per thread: more spills registers
      // (bench/cuda_compile_all counts the points that spill).
      .constraint("BK == 0 or (BM * BK) % (VW * 32 * (BM // WM) * (BN // WN)) == 0")
      .constraint("BK == 0 or (BK * BN) % (VW * 32 * (BM // WM) * (BN // WN)) == 0")
      .constraint("BM == 0 or (BM + BN) * BK <= 32 * 32 * (BM // WM) * (BN // WN)")
      .constraint("BM == 0 or (BM + BN) * BK <= 16 * VW * 32 * (BM // WM) * (BN // WN)")
      // Static shared memory within 48 KiB (no opt-in): STAGES x (A tile + pad, B tile).
      .constraint("STAGES * BK * (BM + 4 + BN) * 4 <= 49152");
  return s;
}

Config sgemm_default_config() {
  // A cheap, safe tile: 128 threads, 4 x 4 accumulators each, scalar loads, one stage.
  return Config{{"impl", "tile"}, {"algo", "none"}, {"BM", 64},   {"BN", 64}, {"WM", 32},
                {"WN", 32},       {"TM", 4},        {"TN", 4},    {"WTN", 8}, {"BK", 8},
                {"VW", 1},        {"STAGES", 1},    {"SPLITK", 1}};
}

std::vector<Config> sgemm_cublas_configs() {
  std::vector<Config> out;
  for (const std::string& algo : blas_algos()) {
    Config c{{"impl", "cublas"}, {"algo", algo}};
    for (const char* p : {"BM", "BN", "WM", "WN", "TM", "TN", "WTN", "BK", "VW", "STAGES"})
      c.set(p, Value(std::int64_t{0}));
    c.set("SPLITK", Value(std::int64_t{1}));
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<KernelRecipe> sgemm_recipe(const Config& config) {
  if (config["impl"].as_string() != "tile") return std::nullopt;
  return KernelRecipe{cuda_sources::sgemm, sgemm_options(config), {"sgemm", "sgemm_reduce"}};
}

namespace {

// The op's key, inputs and validation hooks (the candidates: make_sgemm_op).
void describe_sgemm(Op<CuSgemmArgs>& op, const std::shared_ptr<cuda::Context>& context,
                    const std::shared_ptr<LazyBlas>& lazy_blas, cpu::ThreadPool& pool) {
  op.describe(
        "CUDA single-precision matrix multiply C[m×n] = A[m×k]·B[k×n], row-major: a "
        "CUTLASS-style tile space (block BM/BN/BK, warp WM/WN, thread TM/TN, warp arrangement "
        "WTN, vector width VW, STAGES, split-k) and cuBLAS (cublasSgemm, cublasGemmEx "
        "algorithms) as library points")
      .key_field({"m", Value::Type::integer, "rows of A and C", std::nullopt, 1, kSgemmMaxDim})
      .key_field({"n", Value::Type::integer, "columns of B and C", std::nullopt, 1, kSgemmMaxDim})
      .key_field(
          {"k", Value::Type::integer, "columns of A, rows of B", std::nullopt, 1, kSgemmMaxDim})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key([](const CuSgemmArgs& x) {
        const SgemmArgs& h = x.state->host;
        return Key{{"m", static_cast<std::int64_t>(h.m)},
                   {"n", static_cast<std::int64_t>(h.n)},
                   {"k", static_cast<std::int64_t>(h.k)},
                   {"dtype", "f32"}};
      })
      .inputs([context, lazy_blas](const Key& key, int input_set) {
        require_f32(key, "sgemm");
        SgemmArgs host = make_sgemm_args(key_dimension(key, "m", "sgemm", kSgemmMaxDim),
                                         key_dimension(key, "n", "sgemm", kSgemmMaxDim),
                                         key_dimension(key, "k", "sgemm", kSgemmMaxDim), input_set);
        return CuSgemmArgs{
            std::make_shared<SgemmState>(require_context(context), std::move(host), lazy_blas)};
      })
      // The Args are a handle: copying them would restore nothing on the device.
      .restore([](CuSgemmArgs& x) { x.state->upload_inputs(); })
      .outputs([](CuSgemmArgs& x) {
        x.state->c.read();
        return std::vector<OutputView>{OutputView::of(std::span(x.state->host.c))};
      })
      // The poisoned host output to the device: a point that skips an element cannot pass.
      .validator([](CuSgemmArgs& x) { x.state->c.write(); }, nullptr)
      .reference([&pool](CuSgemmArgs& x) {
        sgemm_reference(pool, x.state->host);
        x.state->c.write();  // the device holds what the host computed
      })
      // As the CPU op: a k-term float dot product's rounding error grows with k.
      .tolerance([](const Key& key) {
        const double k = static_cast<double>(key.integer("k"));
        return Tolerance{0x1p-20 * k, 0x1p-17};
      });
}

}  // namespace

std::unique_ptr<OpBase> make_sgemm_op(std::shared_ptr<cuda::Context> context,
                                      cpu::ThreadPool& pool) {
  auto op = std::make_unique<Op<CuSgemmArgs>>("sgemm", 1);
  auto lazy_blas = std::make_shared<LazyBlas>(context);
  describe_sgemm(*op, context, lazy_blas, pool);
  op->space(sgemm_space(),
            [](const Config& config) -> std::function<void(CuSgemmArgs&)> {
              if (config["impl"].as_string() == "cublas")
                return [algorithm = blas_algorithm(config["algo"].as_string())](CuSgemmArgs& x) {
                  run_blas(algorithm, *x.state);
                };
              return [plan = tile_plan(config)](CuSgemmArgs& x) { run_tile(plan, *x.state); };
            })
      // A tile point sums each dot product in k order, one fma per term (the zero padding adds
      // exact zeros): bitwise like the default. Split-k and cuBLAS sum in other orders.
      .numerics([](const Config& config) {
        return config["impl"].as_string() == "tile" && config["SPLITK"].as_int() == 1
                   ? Numerics::bitwise
                   : Numerics::reassociates;
      })
      .eligible(sgemm_eligible)
      .build([context, lazy_blas](const Config& config) {
        if (const std::optional<KernelRecipe> r = sgemm_recipe(config))
          return build_functions(*require_context(context), r->source, r->options, r->names);
        require_context(context);
        return lazy_blas->ready();
      })
      .default_config(sgemm_default_config())
      // cuBLAS is measured in every search, right after the default: the pick is never slower
      // than the library (TunableOp's library-versus-generated choice).
      .anchors(sgemm_cublas_configs());
  return op;
}

}  // namespace tunekit::kernels::cu
