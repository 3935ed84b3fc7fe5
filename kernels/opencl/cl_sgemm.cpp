// sgemm on OpenCL: CLBlast's xgemm space (work-group tile, thread grid, re-shaped tile loads,
// vector widths, local-memory staging, unrolling, strides) over kernels/opencl/sgemm.cl, one
// lazily built candidate per valid point, validated against the CPU reference.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "opencl/cl_common.hpp"
#include "opencl/cl_ops.hpp"
#include "opencl/sgemm_cl.hpp"
#include "sgemm/sgemm.hpp"

namespace tunekit::kernels::cl {
namespace {

// Inputs on the device, padded with zeros and A transposed (see sgemm.cl); one heap object so
// the host mirror stays where MirroredOutput points.
struct SgemmState {
  SgemmState(std::shared_ptr<opencl::Context> context, SgemmArgs args)
      : host(std::move(args)),
        mp(round_up(host.m, kSgemmPadMN)),
        np(round_up(host.n, kSgemmPadMN)),
        kp(round_up(host.k, kSgemmPadK)),
        kernels(context),
        at(*context, kp * mp * sizeof(float)),
        b(*context, kp * np * sizeof(float)),
        c(*context, host.c, host.m, host.n, mp, np) {
    upload_inputs();
  }

  // The host inputs to the device, padded (again, to undo a candidate that wrote them).
  void upload_inputs() {
    std::vector<float> padded(kp * mp, 0.0f);  // At[k][m] = A[m][k]
    for (std::size_t m = 0; m < host.m; ++m)
      for (std::size_t k = 0; k < host.k; ++k) padded[k * mp + m] = host.a[m * host.k + k];
    at.write(padded.data(), padded.size() * sizeof(float));
    padded.assign(kp * np, 0.0f);
    for (std::size_t k = 0; k < host.k; ++k)
      std::copy_n(host.b.data() + k * host.n, host.n, padded.data() + k * np);
    b.write(padded.data(), padded.size() * sizeof(float));
  }

  SgemmArgs host;
  std::size_t mp, np, kp;
  KernelSet kernels;
  opencl::Buffer at, b;
  MirroredOutput c;
};

struct ClSgemmArgs {
  std::shared_ptr<SgemmState> state;
};

// What a launch needs of a config: the work-group tile and the thread grid.
struct Tile {
  std::size_t mwg, nwg, mdimc, ndimc;
};

std::size_t dim(const Config& c, const char* name) {
  return static_cast<std::size_t>(c[name].as_int());
}

Tile tile_of(const Config& c) {
  return {dim(c, "MWG"), dim(c, "NWG"), dim(c, "MDIMC"), dim(c, "NDIMC")};
}

void bind(opencl::Kernel& k, int mp, int np, int kp, const opencl::Buffer& at,
          const opencl::Buffer& b, const opencl::Buffer& c) {
  k.set_arg(0, mp);
  k.set_arg(1, np);
  k.set_arg(2, kp);
  k.set_arg(3, at);
  k.set_arg(4, b);
  k.set_arg(5, c);
}

void run(const Tile& t, const std::string& options, SgemmState& s) {
  s.c.before_launch();
  opencl::Kernel& k = s.kernels.get(opencl_sources::sgemm, options, "sgemm");
  bind(k, static_cast<int>(s.mp), static_cast<int>(s.np), static_cast<int>(s.kp), s.at, s.b,
       s.c.buffer());
  const std::size_t global[2] = {s.np / t.nwg * t.ndimc, s.mp / t.mwg * t.mdimc};
  const std::size_t local[2] = {t.ndimc, t.mdimc};
  k.launch(global, local);
}

}  // namespace

Space sgemm_space() {
  Space s;
  s.param("MWG", {16, 32, 64, 128})
      .param("NWG", {16, 32, 64, 128})
      .param("KWG", {16, 32})
      // Thread grids down to one work-item: on a CPU device (PoCL) a work-group is a loop on
      // one core, and a small group of work-items with large register tiles is what runs fast
      // there (docs/opencl.md); GPUs want the larger grids.
      .param("MDIMC", {1, 2, 4, 8, 16, 32})
      .param("NDIMC", {1, 2, 4, 8, 16, 32})
      // 16 fills an AVX-512 register.
      .param("VWM", {1, 2, 4, 8, 16})
      .param("VWN", {1, 2, 4, 8, 16})
      .param("SA", {0, 1})
      .param("SB", {0, 1})
      .param("MDIMA", {8, 16, 32})
      .param("NDIMB", {8, 16, 32})
      .param("KWI", {1, 2, 4, 8})
      .param("STRM", {0, 1})
      .param("STRN", {0, 1})
      // CLBlast's xgemm constraints: the tiles divide evenly among the threads and vectors ...
      .constraint("KWG % KWI == 0")
      .constraint("MWG % (MDIMC * VWM) == 0")
      .constraint("NWG % (NDIMC * VWN) == 0")
      // ... and, where a tile is staged in local memory, among the re-shaped loading grid (which
      // has no more work-items than the group).
      .constraint("SA == 0 or MWG % (MDIMA * VWM) == 0")
      .constraint("SA == 0 or (MDIMA <= MDIMC * NDIMC and KWG % ((MDIMC * NDIMC) // MDIMA) == 0)")
      .constraint("SB == 0 or NWG % (NDIMB * VWN) == 0")
      .constraint("SB == 0 or (NDIMB <= MDIMC * NDIMC and KWG % ((MDIMC * NDIMC) // NDIMB) == 0)")
      // MDIMA / NDIMB only shape the loads of a staged tile: without it they are pinned, so no
      // two points build the same kernel. So is STRM (STRN) where each thread has one vector
      // along M (N) and loads one per tile row: strided or not is the same address.
      .constraint("SA == 1 or MDIMA == 8")
      .constraint("SB == 1 or NDIMB == 8")
      .constraint("STRM == 0 or MWG // (MDIMC * VWM) > 1 or (SA == 1 and MWG // (MDIMA * VWM) > 1)")
      .constraint("STRN == 0 or NWG // (NDIMC * VWN) > 1 or (SB == 1 and NWG // (NDIMB * VWN) > 1)")
      // At most 256 accumulators per thread (an 8 x 32 tile: 16 AVX-512 registers, the best
      // on PoCL); GPUs spill long before, which the measurement shows.
      .constraint("(MWG // MDIMC) * (NWG // NDIMC) <= 256");
  return s;
}

Config sgemm_default_config() {
  // A cheap, safe point: 64 work-items, 16 accumulators each, no vectors, no local memory.
  return Config{{"MWG", 32},  {"NWG", 32}, {"KWG", 16}, {"MDIMC", 8}, {"NDIMC", 8},
                {"VWM", 1},   {"VWN", 1},  {"SA", 0},   {"SB", 0},    {"MDIMA", 8},
                {"NDIMB", 8}, {"KWI", 1},  {"STRM", 0}, {"STRN", 1}};
}

std::unique_ptr<OpBase> make_sgemm_op(std::shared_ptr<opencl::Context> context,
                                      cpu::ThreadPool& pool) {
  // Schema 3: thread grids down to one work-item, 16-wide vectors, loaders pinned to 8 when
  // unstaged (schema 2 had grids of 8-32; schema 1 was a list of 48).
  auto op = std::make_unique<Op<ClSgemmArgs>>("sgemm", 3);
  op->describe(
        "OpenCL single-precision matrix multiply C[m×n] = A[m×k]·B[k×n], row-major; CLBlast's "
        "xgemm space: work-group tile MWG/NWG/KWG, threads MDIMC/NDIMC, re-shaped tile loads "
        "MDIMA/NDIMB, vector widths VWM/VWN, local-memory staging SA/SB, unrolling KWI, "
        "strided access STRM/STRN")
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
      .inputs([context](const Key& key, int input_set) {
        require_f32(key, "sgemm");
        SgemmArgs host = make_sgemm_args(key_dimension(key, "m", "sgemm", kSgemmMaxDim),
                                         key_dimension(key, "n", "sgemm", kSgemmMaxDim),
                                         key_dimension(key, "k", "sgemm", kSgemmMaxDim), input_set);
        return ClSgemmArgs{std::make_shared<SgemmState>(context, std::move(host))};
      })
      // The Args are a handle: copying them would restore nothing on the device.
      .restore([](ClSgemmArgs& x) { x.state->upload_inputs(); })
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

  // Every point sums each dot product in the same order (k ascending, one mad per term; the
  // zero padding adds exact zeros): bitwise like the default, the numerics class of a space op
  // unless told otherwise.
  auto step = std::make_shared<BuildStep>(context, opencl_sources::sgemm, "sgemm");
  op->space(sgemm_space(),
            [](const Config& config) -> std::function<void(ClSgemmArgs&)> {
              return [tile = tile_of(config), options = build_options(config)](ClSgemmArgs& x) {
                run(tile, options, *x.state);
              };
            })
      .build([step](const Config& config) {
        const Tile t = tile_of(config);
        const std::size_t local[2] = {t.ndimc, t.mdimc};
        // One work-group at M = N = K = 0: no K step runs, the zero accumulators are stored
        // into the first NWG floats.
        return (*step)(build_options(config), local, t.mwg * t.nwg * sizeof(float),
                       [](opencl::Kernel& k, opencl::Buffer& scratch) {
                         bind(k, 0, 0, 0, scratch, scratch, scratch);
                       });
      })
      .default_config(sgemm_default_config());
  return op;
}

}  // namespace tunekit::kernels::cl
