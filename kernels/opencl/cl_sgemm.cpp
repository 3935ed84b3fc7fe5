// sgemm on OpenCL: a CLBlast-like space (work-group tile, thread tile, vector widths, local
// memory staging) over kernels/opencl/sgemm.cl, validated against the CPU reference.
#include <cstdint>
#include <optional>

#include "opencl/cl_common.hpp"
#include "opencl/cl_ops.hpp"
#include "opencl/sgemm_cl.hpp"
#include "sgemm/sgemm.hpp"

namespace tunekit::kernels::cl {
namespace {

// Inputs on the device, padded with zeros (see sgemm.cl); one heap object so the host mirror
// stays where MirroredOutput points.
struct SgemmState {
  SgemmState(std::shared_ptr<opencl::Context> context, SgemmArgs args)
      : host(std::move(args)),
        mp(round_up(host.m, kSgemmPadMN)),
        np(round_up(host.n, kSgemmPadMN)),
        kp(round_up(host.k, kSgemmPadK)),
        kernels(context),
        a(*context, mp * kp * sizeof(float)),
        b(*context, kp * np * sizeof(float)),
        c(*context, host.c, host.m, host.n, mp, np) {
    upload(a, host.a, host.m, host.k, mp, kp);
    upload(b, host.b, host.k, host.n, kp, np);
  }
  static void upload(opencl::Buffer& to, const std::vector<float>& from, std::size_t rows,
                     std::size_t cols, std::size_t prows, std::size_t pcols) {
    std::vector<float> padded(prows * pcols, 0.0f);
    for (std::size_t r = 0; r < rows; ++r)
      std::copy_n(from.data() + r * cols, cols, padded.data() + r * pcols);
    to.write(padded.data(), padded.size() * sizeof(float));
  }

  SgemmArgs host;
  std::size_t mp, np, kp;
  KernelSet kernels;
  opencl::Buffer a, b;
  MirroredOutput c;
};

struct ClSgemmArgs {
  std::shared_ptr<SgemmState> state;
};

struct Tile {
  std::size_t mwg, nwg, kwg, mdimc, ndimc;
};

void run(const Tile& t, const std::string& options, SgemmState& s) {
  s.c.before_launch();
  opencl::Kernel& k = s.kernels.get(opencl_sources::sgemm, options, "sgemm");
  k.set_arg(0, static_cast<int>(s.kp));
  k.set_arg(1, static_cast<int>(s.np));
  k.set_arg(2, s.a);
  k.set_arg(3, s.b);
  k.set_arg(4, s.c.buffer());
  const std::size_t global[2] = {s.np / t.nwg * t.ndimc, s.mp / t.mwg * t.mdimc};
  const std::size_t local[2] = {t.ndimc, t.mdimc};
  k.launch(global, local);
}

std::size_t dim(const Config& c, const char* name) {
  return static_cast<std::size_t>(c[name].as_int());
}

}  // namespace

Space sgemm_space() {
  Space s;
  s.param("MWG", {16, 32, 64})
      .param("NWG", {16, 32, 64})
      .param("KWG", {16, 32})
      .param("MDIMC", {8, 16})
      .param("NDIMC", {8, 16})
      .param("VWM", {1, 4})
      .param("VWN", {1, 4})
      .param("SA", {0, 1})
      .param("SB", {0, 1})
      // Tiles divide evenly among the threads and vectors.
      .constraint("MWG % MDIMC == 0")
      .constraint("NWG % (NDIMC * VWN) == 0")
      .constraint("KWG % VWM == 0")
      // 4 to 16 accumulators per thread: fewer starves the ALUs, more spills registers.
      .constraint("(MWG // MDIMC) * (NWG // NDIMC) >= 4")
      .constraint("(MWG // MDIMC) * (NWG // NDIMC) <= 16")
      // Square tiles and thread grids, both operands staged or neither: keeps the default tune
      // near 50 candidates, each a separate runtime compilation.
      .constraint("MWG == NWG")
      .constraint("MDIMC == NDIMC")
      .constraint("SA == SB");
  return s;
}

std::unique_ptr<OpBase> make_sgemm_op(std::shared_ptr<opencl::Context> context,
                                      cpu::ThreadPool& pool) {
  auto op = std::make_unique<Op<ClSgemmArgs>>("sgemm", 1);
  op->describe(
        "OpenCL single-precision matrix multiply C[m×n] = A[m×k]·B[k×n], row-major; a "
        "CLBlast-like space: work-group tile MWG/NWG/KWG, threads MDIMC/NDIMC, vector "
        "widths VWM/VWN, local-memory staging SA/SB")
      .key_field({"m", Value::Type::integer, "rows of A and C", std::nullopt, 1, kSgemmMaxDim})
      .key_field({"n", Value::Type::integer, "columns of B and C", std::nullopt, 1, kSgemmMaxDim})
      .key_field(
          {"k", Value::Type::integer, "columns of A, rows of B", std::nullopt, 1, kSgemmMaxDim})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key([](const ClSgemmArgs& x) {
        const SgemmArgs& h = x.state->host;
        return Key{{"m", static_cast<std::int64_t>(h.m)},
                   {"n", static_cast<std::int64_t>(h.n)},
                   {"k", static_cast<std::int64_t>(h.k)},
                   {"dtype", "f32"}};
      })
      .inputs([context](const Key& key) {
        require_f32(key, "sgemm");
        SgemmArgs host = make_sgemm_args(key_dimension(key, "m", "sgemm", kSgemmMaxDim),
                                         key_dimension(key, "n", "sgemm", kSgemmMaxDim),
                                         key_dimension(key, "k", "sgemm", kSgemmMaxDim));
        return ClSgemmArgs{std::make_shared<SgemmState>(context, std::move(host))};
      })
      .outputs([](ClSgemmArgs& x) {
        x.state->c.read();
        return std::vector<OutputView>{OutputView::of(std::span(x.state->host.c))};
      })
      .reference([&pool](ClSgemmArgs& x) {
        sgemm_reference(pool, x.state->host);
        x.state->c.write();  // the device holds what the host computed
      })
      // As the CPU op: a k-term float dot product's rounding error grows with k.
      .tolerance([](const Key& key) {
        const double k = static_cast<double>(key.integer("k"));
        return Tolerance{0x1p-20 * k, 0x1p-17};
      });

  CandidateList<ClSgemmArgs> candidates(*op);
  const Config fallback{{"MWG", 32}, {"NWG", 32}, {"KWG", 16}, {"MDIMC", 8}, {"NDIMC", 8},
                        {"VWM", 1},  {"VWN", 1},  {"SA", 0},   {"SB", 0}};
  std::string default_name;
  for (const Config& config : space_points(sgemm_space())) {
    const Tile tile{dim(config, "MWG"), dim(config, "NWG"), dim(config, "KWG"),
                    dim(config, "MDIMC"), dim(config, "NDIMC")};
    const std::string name = candidate_name(config);
    if (config == fallback) default_name = name;
    // Every candidate sums each dot product in the same order (k ascending, one mad per
    // term; the zero padding adds exact zeros): bitwise like the default.
    candidates.add(
        name, config, Numerics::bitwise,
        [tile, options = build_options(config)](ClSgemmArgs& x) { run(tile, options, *x.state); });
  }
  op->default_candidate(default_name);
  return op;
}

}  // namespace tunekit::kernels::cl
