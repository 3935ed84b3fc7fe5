// stack_bench: the attention block (kernels/attention) decided by tunekit at every level, at
// tokens 512 and 2048, d 512, 8 heads (issue 14's benchmark):
//   (a) every op on its untuned default (the unfused composition);
//   (b) every op on its kernel-TUNED choice: a real Tuner (mode tune, a temporary SQLite
//       store, a wall-clock budget per op key) searches each step's key, and the unfused
//       composition runs the picks;
//   (c) the stack controller's pick: AttentionStack::decide() (operator picks -> graph ->
//       application plan), run through the controller's try_execute.
// Each is validated against attention_reference (check_attention_output) before it is timed;
// (c) against (b) is a paired score (A B B A whole-block runs, median ratio and relative MAD,
// stats::paired_score). docs/stack.md ("Benchmark: the controller's pick") has the numbers
// and the command.
//
//   stack_bench [--tokens 512,2048] [--d 512] [--heads 8] [--threads 2] [--budget 20s]
//               [--budget-evals N] [--samples 10] [--pairs 20] [--rounds 5] [--store DIR]
//               [--skip-defaults]
//
// --budget and --budget-evals bound each op key's kernel search (DecideOptions budgets);
// --samples is the controller's A B B A pairs per graph / plan candidate; --pairs the final
// (c)/(b) score's pairs; --store DIR keeps the store (DIR/choices.db) instead of a temporary
// one.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "attention/attention_stack.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/identity.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/stack.hpp"
#include "tunekit/stats.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"
#include "whole_runs.hpp"

namespace {

using namespace tunekit;
using namespace tunekit::kernels;
using bench::load_average;
using bench::paired;
using bench::time_once;

struct Options {
  std::vector<std::size_t> tokens{512, 2048};
  std::size_t d = 512, heads = 8;
  int threads = 2;
  double budget_seconds = 20;
  std::size_t budget_evals = 0;
  int samples = 10, pairs = 20, rounds = 5;
  std::string store_dir;  // empty: a temporary directory, removed at the end
  bool defaults = true;
};

// Runs `fn` once and checks y against the double reference; a wrong path is no result.
bool validate(const char* what, const std::function<void()>& fn, const AttentionArgs& args,
              const std::vector<float>& expected) {
  fn();
  const AttentionCheck check = check_attention_output(args, expected);
  std::printf("  %-4s validated: %s (max |error| %.2e)\n", what, check.ok ? "ok" : "FAILED",
              check.max_abs_error);
  if (!check.ok)
    std::fprintf(stderr, "%s does not match the reference: %s\n", what, check.message.c_str());
  return check.ok;
}

// One warmup each, then `rounds` interleaved rounds (a load change spreads over every entry);
// each entry's times, in round order.
std::vector<std::vector<double>> interleaved(const std::vector<std::function<void()>>& runs,
                                             int rounds) {
  for (const auto& run : runs) run();
  std::vector<std::vector<double>> times(runs.size());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < runs.size(); ++i) times[i].push_back(time_once(runs[i]));
  return times;
}

double min_of(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

// (b): each step on the candidate the kernel tuner picked for its key (the indices compose
// measured), on the same built-in ops AttentionStack runs.
OpChoices tuned_choices(const AttentionOps& ops, const std::vector<stack::SegmentPick>& picks) {
  if (picks.size() != 6) throw std::runtime_error("expected 6 operator picks");
  const auto gemm = [op = ops.sgemm.get()](std::size_t index) {
    return [op, index](SgemmArgs& a) { op->call(index, a); };
  };
  OpChoices c;
  c.rmsnorm = [op = ops.rmsnorm.get(), i = picks[0].index](RmsnormArgs& a) { op->call(i, a); };
  c.qkv = gemm(picks[1].index);
  c.scores = gemm(picks[2].index);
  c.softmax = [op = ops.softmax.get(), i = picks[3].index](SoftmaxArgs& a) { op->call(i, a); };
  c.context = gemm(picks[4].index);
  c.out = gemm(picks[5].index);
  return c;
}

// What each kernel search ran, from the store's evidence, and the stored stack decisions.
void print_searches(Store& store) {
  std::printf("  the store (kernel searches: strategy, points evaluated; the stack levels):\n");
  for (const StoredChoice& c : store.list()) {
    if (c.scope != "kernel") {
      std::printf("    [%s] %-22s %-28s -> %s\n", c.scope.c_str(), c.op.c_str(), c.key.c_str(),
                  c.winner.c_str());
      continue;
    }
    const std::string how = c.search
                                ? c.search->strategy + ", " + std::to_string(c.search->evaluated) +
                                      " of " + std::to_string(c.search->space_size) + " points"
                                : std::to_string(c.evidence.size()) + " candidates";
    std::printf("    %-8s %-22s -> %-34s (%s%s)\n", c.op.c_str(), c.key.c_str(), c.winner.c_str(),
                how.c_str(), c.budget_cut ? ", budget_cut" : "");
  }
}

struct Row {
  std::size_t tokens = 0;
  double decide_s = 0, a = 0, b = 0, c = 0;
  std::string pick;
  stats::PairedScore score;
};

TunerOptions tuner_options(const Options& o, const std::string& store_spec) {
  TunerOptions t;
  t.decide.mode = Mode::tune;
  t.decide.budget_seconds = o.budget_seconds;
  t.decide.budget_evaluations = o.budget_evals;
  t.persist.store = store_spec;
  t.hooks.log = Log::warnings_to([](std::string_view w) { std::cerr << "warning: " << w << '\n'; });
  return t;
}

// Decides every level at one shape with a fresh tuner and controller on `store_spec`, then
// validates and times (a), (b), (c). False when a path did not validate.
bool run_shape(const Options& o, std::size_t tokens, const std::string& store_spec,
               cpu::ThreadPool& pool, Row& row) {
  row.tokens = tokens;
  std::printf("tokens=%zu d=%zu heads=%zu threads=%d (load %.2f)\n", tokens, o.d, o.heads,
              pool.size(), load_average());
  const TunerOptions topt = tuner_options(o, store_spec);
  cpu::CpuDevice device;
  Tuner tuner(device, topt);
  stack::StackOptions sopt;
  sopt.mode = stack::Mode::explore;
  sopt.policy.samples = o.samples;
  sopt.store = open_store(store_spec, topt.hooks.log.warning_sink());
  sopt.identity.device = device.identity();
  sopt.identity.toolchain = this_toolchain();
  stack::StackController controller(sopt);
  AttentionStack block(tuner, controller, pool, {tokens, o.d, o.heads});

  AttentionDecision decision;
  row.decide_s = time_once([&] { decision = block.decide(); });
  std::printf("  decide(): %.1f s (kernel searches + graph + application)\n", row.decide_s);
  make_reporter("console")->write(summarize(decision), std::cout);
  std::cout.flush();
  print_searches(*sopt.store);
  row.pick = decision.graph.candidate + " / " + decision.application.candidate;

  AttentionArgs args = make_attention_args(tokens, o.d, o.heads);
  AttentionArgs ref = args;
  attention_reference(pool, ref);
  const AttentionOps ops(pool);
  const OpChoices defaults = default_op_choices(pool),
                  tuned = tuned_choices(ops, decision.operators);
  AttentionPlan unfused;  // as the stack's composition runs it: every op on the pool's threads
  unfused.threads = pool.size();
  AttentionWorkspace wa, wb;
  const auto run_a = [&] { attention_run(unfused, pool, wa, args, defaults); };
  const auto run_b = [&] { attention_run(unfused, pool, wb, args, tuned); };
  const auto run_c = [&] { block.run(args); };
  if ((o.defaults && !validate("(a)", run_a, args, ref.y)) ||
      !validate("(b)", run_b, args, ref.y) || !validate("(c)", run_c, args, ref.y))
    return false;
  if (o.defaults) row.a = min_of(interleaved({run_a}, 2)[0]);
  const auto bc = interleaved({run_b, run_c}, o.rounds);
  row.b = min_of(bc[0]), row.c = min_of(bc[1]);
  row.score = paired(run_b, run_c, o.pairs);
  std::printf(
      "  (a) defaults %9.2f ms   (b) kernel-tuned %9.2f ms   (c) controller %9.2f ms"
      "   (fastest of %d interleaved rounds)\n",
      row.a * 1e3, row.b * 1e3, row.c * 1e3, o.rounds);
  if (row.score.scored)
    std::printf("  paired (c)/(b): ratio %.3f (speedup %.2fx), relative MAD %.3f, %d pairs\n",
                row.score.ratio, 1.0 / row.score.ratio, row.score.relative_mad, row.score.pairs);
  else
    std::printf("  paired (c)/(b): no score (%s)\n", row.score.why.c_str());
  std::printf("  (load %.2f at the end)\n", load_average());
  return true;
}

void print_table(const std::vector<Row>& rows) {
  std::printf(
      "\n| tokens | decide | (a) defaults | (b) kernel-tuned | (c) controller | (c) pick "
      "(graph / application) | paired (c)/(b) | speedup | rel. MAD |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %zu | %.0f s | %.1f ms | %.1f ms | %.1f ms | %s | ", r.tokens, r.decide_s,
                r.a * 1e3, r.b * 1e3, r.c * 1e3, r.pick.c_str());
    if (r.score.scored)
      std::printf("%.3f | %.2f× | %.3f |\n", r.score.ratio, 1.0 / r.score.ratio,
                  r.score.relative_mad);
    else
      std::printf("no score | – | – |\n");
  }
}

std::vector<std::size_t> parse_list(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoul(item));
  return out;
}

// "20s", "2m" or plain seconds.
double parse_seconds(const std::string& text) {
  std::size_t used = 0;
  const double v = std::stod(text, &used);
  const std::string unit = text.substr(used);
  if (unit.empty() || unit == "s") return v;
  if (unit == "m") return v * 60;
  throw std::invalid_argument("--budget: write e.g. 20s or 2m, got " + text);
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_next = i + 1 < argc;
    if (arg == "--skip-defaults") {
      o.defaults = false;
      continue;
    }
    if (!has_next) return false;
    const std::string next = argv[++i];
    if (arg == "--tokens")
      o.tokens = parse_list(next);
    else if (arg == "--d")
      o.d = std::stoul(next);
    else if (arg == "--heads")
      o.heads = std::stoul(next);
    else if (arg == "--threads")
      o.threads = std::stoi(next);
    else if (arg == "--budget")
      o.budget_seconds = parse_seconds(next);
    else if (arg == "--budget-evals")
      o.budget_evals = std::stoul(next);
    else if (arg == "--samples")
      o.samples = std::stoi(next);
    else if (arg == "--pairs")
      o.pairs = std::stoi(next);
    else if (arg == "--rounds")
      o.rounds = std::stoi(next);
    else if (arg == "--store")
      o.store_dir = next;
    else
      return false;
  }
  return o.pairs >= 2 && o.rounds >= 1 && o.threads >= 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse(argc, argv, o)) {
      std::fprintf(stderr,
                   "usage: stack_bench [--tokens 512,2048] [--d 512] [--heads 8] [--threads 2] "
                   "[--budget 20s] [--budget-evals N] [--samples 10] [--pairs 20] [--rounds 5] "
                   "[--store DIR] [--skip-defaults]\n");
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stack_bench: %s\n", e.what());
    return 2;
  }
  std::filesystem::path dir = o.store_dir;
  const bool temporary = dir.empty();
  if (temporary) {
    char dir_template[] = "/tmp/tunekit_stack_bench_XXXXXX";
    if (mkdtemp(dir_template) == nullptr) {
      std::perror("stack_bench: mkdtemp");
      return 1;
    }
    dir = dir_template;
  }
  const std::string store_spec = "sqlite:" + (dir / "choices.db").string();
  std::printf(
      "store %s; kernel searches: budget %.0f s%s per op key; controller: %d pairs per "
      "candidate; final score: %d pairs\n",
      store_spec.c_str(), o.budget_seconds,
      o.budget_evals ? (" and " + std::to_string(o.budget_evals) + " points").c_str() : "",
      o.samples, o.pairs);
  int status = 0;
  try {
    cpu::ThreadPool pool(o.threads);
    std::vector<Row> rows;
    for (std::size_t t : o.tokens) {
      Row row;
      if (!run_shape(o, t, store_spec, pool, row)) status = 1;
      rows.push_back(row);
    }
    print_table(rows);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stack_bench: %s\n", e.what());
    status = 1;
  }
  if (temporary) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return status;
}
