// attention_bench: the CPU attention block (kernels/attention) at tokens 512 and 2048, d 512,
// 8 heads: (a) every op on its untuned default, (b) every op on a good kernel choice (the
// fastest of a survey per step key, timed here, listed in the output), (c) the best graph /
// application plan (fused norm, streaming attention, heads in parallel, block sizes) on the
// same op choices. Every figure is validated against the double reference first; (c) against
// (b) is a paired score (A B B A runs, median ratio and its relative MAD). docs/stack.md
// ("Attention block (kernels)") has the numbers and the command.
//
//   attention_bench [--tokens 512,2048] [--d 512] [--heads 8] [--pairs 20] [--threads 2]
//                   [--skip-defaults]
//
// The survey (b) is not the tuner: it times a fixed list per op (OpenBLAS at each thread
// count, the 16-lane packed tiles in both loop orders at each thread count, every softmax
// algorithm at 16 lanes, rmsnorm at 16 lanes) and keeps the fastest median. The softmax list
// includes two_pass_poly (approximate, as the streaming kernel's exp is); (b) is therefore
// the fastest composition the kernels offer, not one restricted to bitwise numerics.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/stats.hpp"
#include "whole_runs.hpp"

namespace {

using namespace tunekit;
using namespace tunekit::kernels;
using bench::load_average;
using bench::paired;
using bench::time_once;

// The fastest of `rounds` interleaved rounds over every entry (one warmup each first): on a
// loaded machine load only adds time, and interleaving spreads a load change over all of them.
// Returns each entry's minimum.
std::vector<double> survey(const std::vector<std::function<void()>>& runs, int rounds) {
  for (const auto& run : runs) run();
  std::vector<double> best(runs.size(), 1e300);
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < runs.size(); ++i) best[i] = std::min(best[i], time_once(runs[i]));
  }
  return best;
}

template <class Args>
struct Named {
  std::string name;
  std::function<void(Args&)> run;
};

template <class Args>
Named<Args> fastest(const char* step, std::vector<Named<Args>> list, Args& args, int rounds) {
  std::vector<std::function<void()>> runs;
  for (const Named<Args>& entry : list) runs.push_back([&entry, &args] { entry.run(args); });
  const std::vector<double> times = survey(runs, rounds);
  const std::size_t best = std::min_element(times.begin(), times.end()) - times.begin();
  std::printf("    %-8s %-34s %8.3f ms\n", step, list[best].name.c_str(), times[best] * 1e3);
  return list[best];
}

std::vector<Named<SgemmArgs>> sgemm_list(cpu::ThreadPool& pool) {
  std::vector<Named<SgemmArgs>> list;
  for (int t = 1; t <= pool.size(); ++t) {
    list.push_back({"openblas_t" + std::to_string(t), [t](SgemmArgs& a) { sgemm_openblas(t, a); }});
    for (int mr : {8, 12}) {
      for (SgemmOrder order : {SgemmOrder::jpi, SgemmOrder::ijp}) {
        const SgemmPacked plan{mr, 32, 96, 256, 2048, order, t};
        list.push_back({"packed_" + std::to_string(mr) + "x32_" + std::string(to_string(order)) +
                            "_t" + std::to_string(t),
                        [plan, &pool](SgemmArgs& a) { sgemm_packed(plan, pool, a); }});
      }
    }
  }
  return list;
}

// (b): the fastest survey point for each step's key.
OpChoices good_choices(cpu::ThreadPool& pool, std::size_t t, std::size_t d, std::size_t heads) {
  const std::size_t hd = d / heads;
  OpChoices ops;
  const int runs = 5;
  std::printf("  kernel choices (fastest of the survey per step key):\n");
  {
    RmsnormArgs a = make_rmsnorm_args(t, d);
    std::vector<Named<RmsnormArgs>> list;
    for (int th = 1; th <= pool.size(); ++th)
      list.push_back({"rmsnorm_v16_t" + std::to_string(th), [th, &pool](RmsnormArgs& x) {
                        rmsnorm_run({16, 16, th}, pool, x);
                      }});
    ops.rmsnorm = fastest("rmsnorm", list, a, runs).run;
  }
  const auto gemm = [&](const char* step, std::size_t m, std::size_t n, std::size_t k) {
    SgemmArgs a = make_sgemm_args(m, n, k);
    return fastest(step, sgemm_list(pool), a, runs).run;
  };
  ops.qkv = gemm("qkv", t, 3 * d, d);
  ops.scores = gemm("scores", t, t, hd);
  {
    SoftmaxArgs a = make_softmax_args(t, t);
    std::vector<Named<SoftmaxArgs>> list;
    for (int th = 1; th <= pool.size(); ++th) {
      for (SoftmaxAlgo algo : {SoftmaxAlgo::two_pass, SoftmaxAlgo::two_pass_poly}) {
        const SoftmaxPlan plan{algo, 16, 16, th};
        list.push_back({std::string(to_string(algo)) + "_v16_t" + std::to_string(th),
                        [plan, &pool](SoftmaxArgs& x) { softmax_run(plan, pool, x); }});
      }
    }
    ops.softmax = fastest("softmax", list, a, runs).run;
  }
  ops.context = gemm("context", t, hd, t);
  ops.out = gemm("out", t, d, d);
  return ops;
}

// Runs `plan` once against the reference; exits on a mismatch (a wrong plan is no result).
void validate(const AttentionPlan& plan, cpu::ThreadPool& pool, AttentionWorkspace& ws,
              AttentionArgs& args, const std::vector<float>& expected, const OpChoices& ops) {
  attention_run(plan, pool, ws, args, ops);
  const AttentionCheck check = check_attention_output(args, expected);
  if (!check.ok) {
    std::fprintf(stderr, "%s does not match the reference: %s\n", to_string(plan).c_str(),
                 check.message.c_str());
    std::exit(1);
  }
}

// Every plan validated, then timed in interleaved rounds (each plan its own workspace, so no
// plan pays another's allocation); each plan's fastest round.
std::vector<double> time_plans(const std::vector<AttentionPlan>& plans, cpu::ThreadPool& pool,
                               AttentionArgs& args, const std::vector<float>& expected,
                               const OpChoices& ops, int rounds) {
  std::vector<AttentionWorkspace> spaces(plans.size());
  std::vector<std::function<void()>> runs;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    validate(plans[i], pool, spaces[i], args, expected, ops);
    runs.push_back([&, i] { attention_run(plans[i], pool, spaces[i], args, ops); });
  }
  return survey(runs, rounds);
}

struct Options {
  std::vector<std::size_t> tokens{512, 2048};
  std::size_t d = 512, heads = 8;
  int pairs = 20, threads = 2;
  bool defaults = true;
};

void run_shape(const Options& o, std::size_t t, cpu::ThreadPool& pool) {
  std::printf("tokens=%zu d=%zu heads=%zu (load %.2f)\n", t, o.d, o.heads, load_average());
  AttentionArgs args = make_attention_args(t, o.d, o.heads);
  AttentionArgs ref = args;
  attention_reference(pool, ref);
  if (o.defaults) {
    const OpChoices defaults = default_op_choices(pool);
    const double a = time_plans({AttentionPlan{}}, pool, args, ref.y, defaults, 2)[0];
    std::printf("  (a) defaults   %-44s %9.2f ms\n", to_string(AttentionPlan{}).c_str(), a * 1e3);
  }
  const OpChoices ops = good_choices(pool, t, o.d, o.heads);
  const std::vector<AttentionPlan> plans = attention_plans(o.threads);
  const std::vector<double> times = time_plans(plans, pool, args, ref.y, ops, 5);
  for (std::size_t i = 0; i < plans.size(); ++i)
    std::printf("      plan       %-44s %9.2f ms\n", to_string(plans[i]).c_str(), times[i] * 1e3);
  // (b) is the unfused plan on the op choices: each op on its own chosen threads.
  std::size_t best = 1;
  for (std::size_t i = 1; i < plans.size(); ++i)
    if (times[i] < times[best]) best = i;
  const AttentionPlan best_plan = plans[best];
  std::printf("  (b) kernels    %-44s %9.2f ms  (validated)\n", to_string(plans[0]).c_str(),
              times[0] * 1e3);
  std::printf("  (c) plan       %-44s %9.2f ms  (validated)\n", to_string(best_plan).c_str(),
              times[best] * 1e3);
  AttentionWorkspace wb, wc;
  const stats::PairedScore s =
      paired([&] { attention_run({}, pool, wb, args, ops); },
             [&] { attention_run(best_plan, pool, wc, args, ops); }, o.pairs);
  if (s.scored) {
    std::printf("  paired (c)/(b): ratio %.3f (speedup %.2fx), relative MAD %.3f, %d pairs\n",
                s.ratio, 1.0 / s.ratio, s.relative_mad, s.pairs);
  } else {
    std::printf("  paired (c)/(b): no score (%s)\n", s.why.c_str());
  }
  std::printf("  (load %.2f at the end)\n", load_average());
}

std::vector<std::size_t> parse_list(const char* text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoul(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--tokens" && next)
      o.tokens = parse_list(argv[++i]);
    else if (arg == "--d" && next)
      o.d = std::stoul(argv[++i]);
    else if (arg == "--heads" && next)
      o.heads = std::stoul(argv[++i]);
    else if (arg == "--pairs" && next)
      o.pairs = std::stoi(argv[++i]);
    else if (arg == "--threads" && next)
      o.threads = std::stoi(argv[++i]);
    else if (arg == "--skip-defaults")
      o.defaults = false;
    else {
      std::fprintf(stderr,
                   "usage: attention_bench [--tokens 512,2048] [--d 512] [--heads 8] "
                   "[--pairs 20] [--threads 2] [--skip-defaults]\n");
      return 2;
    }
  }
  cpu::ThreadPool pool(o.threads);
  try {
    for (std::size_t t : o.tokens) run_shape(o, t, pool);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attention_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
