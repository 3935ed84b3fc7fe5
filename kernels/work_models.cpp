// Work models of the built-in CPU ops. Counts follow the kernels' loops in sgemm.cpp,
// softmax.cpp, rmsnorm.cpp and sum.cpp; the comments say which loop each term stands for.
#include "work_models.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace tunekit::kernels {
namespace {

constexpr double kF32 = 4;  // bytes

double dim(const Key& key, const char* name) {
  return static_cast<double>(key.integer(name));
}

int config_int(const Candidate& c, const char* name, int fallback) {
  const Value* v = c.config.find(name);
  return v ? static_cast<int>(v->as_int()) : fallback;
}

std::string config_text(const Candidate& c, const char* name) {
  const Value* v = c.config.find(name);
  return v ? v->text() : std::string();
}

// Threads that get work: a parallel loop over `tasks` tasks uses at most that many.
int busy_threads(int threads, double tasks) {
  return std::max(1, static_cast<int>(std::min<double>(threads, std::max(1.0, tasks))));
}

// Scalar flops of one std::exp call (a library call per element: it does not vectorise).
constexpr double kLibExpFlops = 20;
// Vector flops of the polynomial exp per element (range reduction, degree-6 polynomial,
// exponent bits).
constexpr double kPolyExpFlops = 22;

}  // namespace

namespace {

// Rows (or columns) the packed kernels compute for `size` in blocks of `block`: each block is
// rounded up to whole register tiles of `tile` (the panels are zero-padded), so a skinny
// problem (m = 1 on a 12-row tile) does the tile's work, not its own.
double padded(double size, double block, double tile) {
  const double full = std::floor(size / block), rest = size - full * block;
  return full * std::ceil(block / tile) * tile + std::ceil(rest / tile) * tile;
}

// A GotoBLAS/BLIS-style packed kernel: register tile mr×nr of `lanes`-wide vectors, cache
// blocks mc, kc, nc, loop order jpi or ijp. `pad`: whether edge tiles are computed in full
// (tunekit's kernels) or by narrower edge kernels (OpenBLAS).
Work packed_work(double m, double n, double k, double mr, double nr, int lanes, double mc,
                 double kc, double nc, bool ijp, int threads, bool pad) {
  Work w;
  w.flops = pad ? 2 * padded(m, mc, mr) * padded(n, nc, nr) * k : 2 * m * n * k;
  w.compulsory_bytes = kF32 * (m * k + k * n + m * n);
  const double jc_blocks = std::ceil(n / nc), pc_blocks = std::ceil(k / kc),
               ic_blocks = std::ceil(m / mc);
  // Register blocking: each micro-tile streams an MR-row sliver of packed A and an NR-column
  // sliver of packed B per step of k, with MR·NR/lanes accumulator vectors in flight.
  const double micro_loads = kF32 * m * n * k * (1 / mr + 1 / nr);
  w.vector_lanes = lanes;
  w.chains = static_cast<int>(mr * nr / lanes);
  // C is read and written once per kc block after the first.
  const double c_passes = kF32 * 2 * m * n * (pc_blocks - 1);
  if (ijp) {
    // Every (ic, jc) tile packs its own A block and B panel: A is packed once per jc block,
    // B once per ic block, nothing shared; one parallel loop over the tiles.
    w.reread_bytes =
        micro_loads + c_passes + kF32 * 2 * m * k * jc_blocks + kF32 * 2 * k * n * ic_blocks;
    w.threads = busy_threads(threads, ic_blocks * jc_blocks);
    w.dispatches = threads > 1 ? 1 : 0;
  } else {
    // GotoBLAS: the B panel is packed once per (jc, pc) and shared; each ic task packs its A
    // block once per jc block. Two parallel loops (pack B, compute) per (jc, pc).
    w.reread_bytes = micro_loads + c_passes + kF32 * 2 * m * k * jc_blocks + kF32 * k * n;
    w.threads = busy_threads(threads, ic_blocks);
    w.dispatches = threads > 1 ? static_cast<int>(2 * jc_blocks * pc_blocks) : 0;
  }
  // The block re-read from cache: the packed B panel and one packed A block per thread.
  w.working_set_bytes =
      kF32 * (std::min(kc, k) * std::min(nc, n) + w.threads * std::min(mc, m) * std::min(kc, k));
  return w;
}

}  // namespace

std::optional<Work> sgemm_work(const Key& key, const Candidate& c) {
  const double m = dim(key, "m"), n = dim(key, "n"), k = dim(key, "k");
  const std::string algo = config_text(c, "algo");
  Work w;
  w.flops = 2 * m * n * k;
  w.compulsory_bytes = kF32 * (m * k + k * n + m * n);
  if (algo == "naive") {
    // One dot product per element: a dependent scalar chain walking down B's column; all of
    // B is re-read for every row of A, and the row of A for every column of B.
    w.serial_flops = w.flops;
    w.flops = 0;
    w.reread_bytes = kF32 * 2 * m * n * k;
    w.working_set_bytes = kF32 * (k * n + k);
    return w;
  }
  if (algo == "ikj") {
    // C[i,:] += A[i,p]·B[p,:]: vectorised over j, but every step loads B's row and loads and
    // stores C's row; B is re-read for every row of A.
    w.reread_bytes = kF32 * 3 * m * n * k;
    w.working_set_bytes = kF32 * (k * n + n);
    return w;
  }
  const int threads = config_int(c, "threads", 1);
  if (threads < 1) return std::nullopt;
  if (algo == "openblas") {
    // The model cannot see inside the library: it is ranked as a well-blocked GotoBLAS kernel
    // of the space (the jpi order, the widest register tile 12×32 on 16-lane vectors, cache
    // blocks mc 192, kc 384, nc 1024), except that OpenBLAS's edge kernels do not compute
    // padded tiles. Scored rather than left out, so a model-ordered search proposes it among
    // the best-ranked points and model mode can pick it; a measured search decides between
    // it and the packed points that rank alike.
    return packed_work(m, n, k, 12, 32, 16, 192, 384, 1024, false, threads, false);
  }
  if (algo != "packed") return std::nullopt;
  const double mr = config_int(c, "mr", 0), nr = config_int(c, "nr", 0);
  const double mc = config_int(c, "mc", 0), kc = config_int(c, "kc", 0),
               nc = config_int(c, "nc", 0);
  if (mr <= 0 || nr <= 0 || mc <= 0 || kc <= 0 || nc <= 0) return std::nullopt;
  // NR = 32 runs on 16-lane vectors, the other register blocks on 8-lane ones (sgemm.cpp).
  const int lanes = static_cast<int>(nr) % 32 == 0 ? 16 : 8;
  return packed_work(m, n, k, mr, nr, lanes, mc, kc, nc, config_text(c, "order") == "ijp", threads,
                     true);
}

std::optional<Work> softmax_work(const Key& key, const Candidate& c) {
  const double rows = dim(key, "rows"), cols = dim(key, "cols"), elements = rows * cols;
  const std::string algo = config_text(c, "algo");
  const int vec = config_int(c, "vec", 1);
  const int threads = config_int(c, "threads", 1);
  const int per = std::max(1, config_int(c, "rows_per_task", 1));
  Work w;
  w.threads = busy_threads(threads, std::ceil(rows / per));
  w.dispatches = threads > 1 ? 1 : 0;
  w.compulsory_bytes = kF32 * 2 * elements;  // x read, y written
  // The vector passes: the row max and the scaling (2 flops per element) and the sum in `vec`
  // interleaved lanes (vec/8 accumulator vectors); vec 1 sums in order, one dependent chain.
  if (vec == 1) {
    w.flops = 2 * elements;
    w.serial_flops = elements;
  } else {
    w.flops = 3 * elements;
    w.vector_lanes = vec;
    w.chains = std::max(1, vec / 8);
  }
  if (algo == "two_pass" || algo == "two_pass_poly") {
    // max over x, y = exp(x - max), sum of y, y *= 1/sum: x read twice, y written, read and
    // written again.
    if (algo == "two_pass_poly") {
      w.flops += kPolyExpFlops * elements;  // vectorised with the rest
    } else {
      w.scalar_flops = kLibExpFlops * elements;  // std::exp: a scalar library call
    }
    w.reread_bytes = kF32 * 4 * elements;
  } else if (algo == "online") {
    // One pass with a running max and a rescaled sum (an exp per element, a branch), then
    // exp(x - max)/sum: two scalar exps per element, x read twice.
    w.scalar_flops = (2 * kLibExpFlops + 2) * elements;
    w.reread_bytes = kF32 * elements;
  } else {
    return std::nullopt;
  }
  w.working_set_bytes = kF32 * 2 * cols * w.threads;  // a row of x and of y per thread
  return w;
}

std::optional<Work> rmsnorm_work(const Key& key, const Candidate& c) {
  const double rows = dim(key, "rows"), cols = dim(key, "cols"), elements = rows * cols;
  const int vec = config_int(c, "vec", 1);
  const int threads = config_int(c, "threads", 1);
  const int per = std::max(1, config_int(c, "rows_per_task", 1));
  Work w;
  w.threads = busy_threads(threads, std::ceil(rows / per));
  w.dispatches = threads > 1 ? 1 : 0;
  w.compulsory_bytes = kF32 * (2 * elements + cols);  // x read, y written, w read
  // Sum of squares in `vec` lanes (vec 1: an in-order chain), then y = x · inv · w.
  if (vec == 1) {
    w.serial_flops = 2 * elements;
    w.flops = 2 * elements;
  } else {
    w.flops = 4 * elements;
    w.vector_lanes = vec;
    w.chains = std::max(1, vec / 8);
  }
  w.reread_bytes = kF32 * (elements + elements);  // x again and w for every row
  w.working_set_bytes = kF32 * 3 * cols * w.threads;
  return w;
}

std::optional<Work> sum_work(const Key& key, const Candidate& c) {
  const double n = dim(key, "n");
  const std::string algo = config_text(c, "algo");
  Work w;
  w.compulsory_bytes = kF32 * n;
  w.working_set_bytes = 0;
  if (algo == "serial") {
    w.serial_flops = n;
  } else if (algo == "pairwise") {
    // Runs of 128 summed in order: still one dependent chain at a time.
    w.serial_flops = n;
    w.flops = n / 128;
  } else if (algo == "blocked") {
    const int acc = config_int(c, "acc", 8);
    const int threads = config_int(c, "threads", 1);
    w.flops = n;
    w.vector_lanes = acc;
    w.chains = std::max(1, acc / 8);
    w.threads = busy_threads(threads, std::ceil(n / 64));
    w.dispatches = threads > 1 ? 1 : 0;
  } else {
    return std::nullopt;
  }
  return w;
}

}  // namespace tunekit::kernels
