// What isolated trials cost (issue #12): every built-in CPU op tuned twice on its example
// shape (or --shape-scale'd ones), once with trials in process and once in worker processes,
// alternating so drift hits both. Per op: the total tune time of each, the phases a worker ran
// (admissions, timing windows, confirmation sides), the overhead per phase, and whether the
// two rankings agree (the winner, and the candidates' scores worker / in process), beside how
// well two in-process runs agree with each other (the noise floor of the comparison).
// --fork-cost instead measures what starting a worker costs against the host's resident memory
// (the fork and exit of detail::WorkerProcess, and the copy-on-write faults of what it writes).
// --backend opencl: the OpenCL ops on the first OpenCL device, in process against spawned
// workers (`tunekit trial-worker`, a process with a context of its own; --worker-program,
// default the tunekit built beside this bench); sgemm and conv2d under --budget-evals points of
// a random search (seed 1), the row ops in full.
//   ./bin/isolation_bench [--rounds 3] [--ops sum,softmax,rmsnorm,sgemm] [--shape op=k=v,...]
//   ./bin/isolation_bench --backend opencl [--ops softmax,rmsnorm,sgemm,conv2d] [--budget-evals 8]
//   ./bin/isolation_bench --fork-cost
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "isolate/worker_process.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/opencl.hpp"
#include "tunekit/opencl_catalog.hpp"
#include "tunekit/tuner.hpp"

namespace {

using namespace tunekit;

struct Run {
  double seconds = 0;
  std::size_t phases = 0;
  TuneReport report;
};

// What one bench run tunes on: the CPU device made afresh per run, or one OpenCL device.
struct Bench {
  Device* device = nullptr;  // nullptr: a fresh cpu::CpuDevice per run
  std::string worker_program;
  std::size_t budget_evaluations = 0;
};

Run tune_once(const Bench& bench, const OpBase& op, const Key& key, IsolationOptions::Mode mode) {
  cpu::CpuDevice cpu;
  Device& device = bench.device ? *bench.device : cpu;
  TunerOptions options;
  options.measure.isolation.mode = mode;
  options.measure.isolation.worker_program = bench.worker_program;
  if (bench.budget_evaluations > 0 && op.size() > 64) {
    options.decide.strategy = "random";
    options.decide.budget_evaluations = bench.budget_evaluations;
  }
  const auto start = std::chrono::steady_clock::now();
  Run run;
  run.report = Tuner(device, options).tune(op, key);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const CandidateReport& c : run.report.candidates) {
    if (c.outcome.status == Status::rejected || c.outcome.status == Status::skipped) continue;
    run.phases += 1 + (c.timing ? 1 + static_cast<std::size_t>(c.retries) : 0);
  }
  run.phases += 2 * static_cast<std::size_t>(run.report.paired_pairs);
  return run;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The median over candidates ranked in both runs of (worker score / in-process score), and
// the fraction of pairs of candidates the two runs order the same way.
std::pair<double, double> agreement(const TuneReport& a, const TuneReport& b) {
  std::map<std::string, double> in_process;
  for (const auto& c : a.candidates)
    if (c.outcome.ok()) in_process[c.name] = c.score;
  std::vector<std::pair<double, double>> both;
  std::vector<double> ratios;
  for (const auto& c : b.candidates) {
    auto it = in_process.find(c.name);
    if (!c.outcome.ok() || it == in_process.end()) continue;
    both.emplace_back(it->second, c.score);
    ratios.push_back(c.score / it->second);
  }
  std::size_t same = 0, pairs = 0;
  for (std::size_t i = 0; i < both.size(); ++i)
    for (std::size_t j = i + 1; j < both.size(); ++j) {
      ++pairs;
      same += (both[i].first < both[j].first) == (both[i].second < both[j].second);
    }
  return {median(ratios), pairs ? static_cast<double>(same) / static_cast<double>(pairs) : 1.0};
}

void fork_cost() {
  std::printf("%12s %18s %14s\n", "resident MB", "worker writes MB", "ms per worker");
  for (std::size_t mb : {0, 64, 256, 1024}) {
    std::vector<char> resident(mb << 20, 1);
    for (std::size_t writes : {0, 16}) {
      const std::size_t n = std::min(resident.size(), writes << 20);
      const int reps = 20;
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) {
        detail::WorkerProcess worker(
            [&](std::string_view) {
              std::fill_n(resident.data(), n, char{2});
              return std::string("done");
            },
            0);
        worker.call("", 10);
      }
      const double ms =
          1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%12zu %18zu %14.2f\n", mb, n >> 20, ms / reps);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && !std::strcmp(argv[1], "--fork-cost")) {
    fork_cost();
    return 0;
  }
  int rounds = 3;
  std::string ops, backend = "cpu";
  std::map<std::string, std::string> shapes;
  Bench bench;
  bench.worker_program = TUNEKIT_CLI_PATH;
  bench.budget_evaluations = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--ops")) ops = argv[i + 1];
    if (!std::strcmp(argv[i], "--backend")) backend = argv[i + 1];
    if (!std::strcmp(argv[i], "--worker-program")) bench.worker_program = argv[i + 1];
    if (!std::strcmp(argv[i], "--budget-evals"))
      bench.budget_evaluations = static_cast<std::size_t>(std::max(1, std::atoi(argv[i + 1])));
    if (!std::strcmp(argv[i], "--shape")) {
      const std::string s = argv[i + 1];
      shapes[s.substr(0, s.find('='))] = s.substr(s.find('=') + 1);
    }
  }
  cpu::ThreadPool pool;
  std::shared_ptr<opencl::Context> context;
  std::unique_ptr<opencl::OpenclDevice> opencl_device;
  if (backend == "opencl") {
    context = opencl::Context::open();
    opencl_device = std::make_unique<opencl::OpenclDevice>(context);
    bench.device = opencl_device.get();
    if (ops.empty()) ops = "softmax,rmsnorm,sgemm,conv2d";
    std::printf("OpenCL device: %s; workers: %s\n", context->info().identity.product.c_str(),
                bench.worker_program.c_str());
  } else if (ops.empty()) {
    ops = "sum,softmax,rmsnorm,sgemm";
  }
  // An op of the chosen backend by name, with its example shape.
  auto make_op = [&](const std::string& name) -> std::pair<std::unique_ptr<OpBase>, std::string> {
    if (context) {
      const opencl::CatalogEntry& e = opencl::find_builtin_op(name);
      return {e.make(context, pool), e.example_shape};
    }
    const CatalogEntry& e = find_builtin_op(name);
    return {e.make(pool), e.example_shape};
  };
  std::printf("%-8s %-22s %10s %10s %7s %9s %7s %9s %6s %9s %6s\n", "op", "shape", "in-proc s",
              "worker s", "phases", "ms/phase", "winner", "score w/i", "order", "score i/i",
              "order");
  std::stringstream list(ops);
  for (std::string name; std::getline(list, name, ',');) {
    auto [op, example_shape] = make_op(name);
    const std::string shape = shapes.count(name) ? shapes[name] : example_shape;
    const Key key = op->parse_shape(shape);
    std::vector<double> in_s, worker_s, per_phase;
    Run last_in, last_worker, again;
    for (int r = 0; r < rounds; ++r) {
      last_in = tune_once(bench, *op, key, IsolationOptions::Mode::in_process);
      last_worker = tune_once(bench, *op, key, IsolationOptions::Mode::worker);
      if (r + 1 == rounds) again = tune_once(bench, *op, key, IsolationOptions::Mode::in_process);
      in_s.push_back(last_in.seconds);
      worker_s.push_back(last_worker.seconds);
      per_phase.push_back((last_worker.seconds - last_in.seconds) /
                          static_cast<double>(std::max<std::size_t>(1, last_worker.phases)));
    }
    const auto [ratio, order] = agreement(last_in.report, last_worker.report);
    const auto [noise_ratio, noise_order] = agreement(last_in.report, again.report);
    std::printf("%-8s %-22s %10.3f %10.3f %7zu %9.3f %7s %9.3f %6.2f %9.3f %6.2f\n", name.c_str(),
                shape.c_str(), median(in_s), median(worker_s), last_worker.phases,
                1e3 * median(per_phase),
                last_in.report.winner_name == last_worker.report.winner_name ? "same" : "differ",
                ratio, order, noise_ratio, noise_order);
    if (last_in.report.winner_name != last_worker.report.winner_name)
      std::printf("         winners: in process %s, worker %s\n",
                  last_in.report.winner_name.c_str(), last_worker.report.winner_name.c_str());
  }
  return 0;
}
