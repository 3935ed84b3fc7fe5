// NVRTC compiles every point of every built-in CUDA op's space (issue #15: "all in a bench";
// the tests compile a sample): the exact build of each point (kernels/cuda/cu_ops.hpp's
// recipes, as the ops' build steps compile them), each distinct kernel once, for each
// architecture asked, on several threads. No GPU needed. Prints per op and architecture the
// kernels compiled, the failures (the first few with NVRTC's log), the kernels whose registers
// spill, and the time; exits 1 when any point fails to compile.
//
//   cuda_compile_all [--arch sm_80,sm_90] [--jobs N] [--op sgemm] [--sample N]
//
// --sample N compiles a seeded random N of each op's distinct kernels (a quick look); conv2d
// is compiled for a 5×5 and a 17×17 filter (the largest shared tile).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cu_ops.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/outcome.hpp"

namespace {

using tunekit::Config;
using tunekit::Enumeration;
using tunekit::kernels::cu::KernelRecipe;
namespace cu = tunekit::kernels::cu;

struct Args {
  std::vector<std::string> archs{"sm_80", "sm_90"};
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string op;          // "": all
  std::size_t sample = 0;  // 0: every kernel
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::cerr
          << "usage: cuda_compile_all [--arch sm_80,sm_90] [--jobs N] [--op NAME] [--sample N]\n";
      std::exit(2);
    }
    const std::string value = argv[++i];
    if (flag == "--arch")
      a.archs = split(value);
    else if (flag == "--jobs")
      a.jobs = static_cast<unsigned>(std::max(1, std::stoi(value)));
    else if (flag == "--op")
      a.op = value;
    else if (flag == "--sample")
      a.sample = std::stoul(value);
    else {
      std::cerr << "unknown option " << flag << "\n";
      std::exit(2);
    }
  }
  return a;
}

// Each distinct options of `recipes` (one op's: one source) once: sgemm's SPLITK changes the launch
// only. (then, with `sample`, a seeded random `sample` of them).
std::vector<KernelRecipe> distinct(std::vector<KernelRecipe> recipes, std::size_t sample) {
  std::set<std::vector<std::string>> seen;
  std::vector<KernelRecipe> out;
  for (KernelRecipe& r : recipes)
    if (seen.insert(r.options).second) out.push_back(std::move(r));
  if (sample && sample < out.size()) {
    std::mt19937_64 rng(1);
    std::shuffle(out.begin(), out.end(), rng);
    out.resize(sample);
  }
  return out;
}

std::vector<KernelRecipe> recipes_of(const std::string& op) {
  std::vector<KernelRecipe> out;
  auto each = [&](const tunekit::Space& space, auto add) {
    const Enumeration points = space.enumerate();
    for (std::size_t i = 0; i < points.size(); ++i) add(points.config(i));
  };
  if (op == "sgemm")
    each(cu::sgemm_space(), [&](const Config& c) {
      if (auto r = cu::sgemm_recipe(c)) out.push_back(std::move(*r));
    });
  if (op == "softmax")
    each(cu::softmax_space(), [&](const Config& c) { out.push_back(cu::softmax_recipe(c)); });
  if (op == "rmsnorm")
    each(cu::rmsnorm_space(), [&](const Config& c) { out.push_back(cu::rmsnorm_recipe(c)); });
  if (op == "conv2d")
    for (const std::size_t f : {5u, 17u})
      each(cu::conv2d_space(), [&](const Config& c) { out.push_back(cu::conv2d_recipe(c, f, f)); });
  return out;
}

struct Tally {
  std::atomic<std::size_t> compiled{0}, failed{0}, spilled{0};
  std::mutex mutex;
  std::vector<std::string> failures, spills;  // the first few of each
};

std::string joined(const std::vector<std::string>& options) {
  std::string out;
  for (const std::string& o : options) out += (out.empty() ? "" : " ") + o;
  return out;
}

void compile_one(tunekit::cuda::Compiler& compiler, const KernelRecipe& r, const std::string& arch,
                 Tally& tally) {
  std::vector<std::string> options = r.options;
  options.emplace_back("--ptxas-options=--warn-on-spills");
  try {
    const tunekit::cuda::ModuleImage image = compiler.compile(r.source, options, arch);
    ++tally.compiled;
    if (image.log.find("spill") == std::string::npos) return;
    ++tally.spilled;
    std::lock_guard lock(tally.mutex);
    if (tally.spills.size() < 5) tally.spills.push_back(joined(r.options));
  } catch (const tunekit::TrialError& e) {
    ++tally.failed;
    std::lock_guard lock(tally.mutex);
    if (tally.failures.size() < 5) tally.failures.push_back(joined(r.options) + ": " + e.what());
  }
}

bool run_op(const Args& args, const std::string& op) {
  const std::vector<KernelRecipe> recipes = distinct(recipes_of(op), args.sample);
  bool ok = true;
  for (const std::string& arch : args.archs) {
    auto compiler = tunekit::cuda::nvrtc_compiler();
    Tally tally;
    std::atomic<std::size_t> next{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (unsigned j = 0; j < args.jobs; ++j)
      workers.emplace_back([&] {
        for (std::size_t i; (i = next++) < recipes.size();)
          compile_one(*compiler, recipes[i], arch, tally);
      });
    for (std::thread& w : workers) w.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << op << " " << arch << ": " << tally.compiled << " of " << recipes.size()
              << " kernels compiled, " << tally.failed << " failed, " << tally.spilled
              << " spill registers; " << seconds << " s on " << args.jobs << " threads\n";
    for (const std::string& f : tally.failures) std::cout << "  FAILED " << f << "\n";
    for (const std::string& f : tally.spills) std::cout << "  spills: " << f << "\n";
    ok = ok && tally.failed == 0;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  bool ok = true;
  for (const std::string op : {"sgemm", "softmax", "rmsnorm", "conv2d"})
    if (args.op.empty() || args.op == op) ok = run_op(args, op) && ok;
  return ok ? 0 : 1;
}
