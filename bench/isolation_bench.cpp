// What isolated trials cost (issue #12): every built-in CPU op tuned twice on its example
// shape (or --shape-scale'd ones), once with trials in process and once in worker processes,
// alternating so drift hits both. Per op: the total tune time of each, the phases a worker ran
// (admissions, timing windows, confirmation sides), the overhead per phase, and whether the
// two rankings agree (the winner, and the candidates' scores worker / in process), beside how
// well two in-process runs agree with each other (the noise floor of the comparison).
// --fork-cost instead measures what starting a worker costs against the host's resident memory
// (the fork and exit of detail::WorkerProcess, and the copy-on-write faults of what it writes).
//   ./bin/isolation_bench [--rounds 3] [--ops sum,softmax,rmsnorm,sgemm] [--shape op=k=v,...]
//   ./bin/isolation_bench --fork-cost
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "isolate/worker_process.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/tuner.hpp"

namespace {

using namespace tunekit;

struct Run {
  double seconds = 0;
  std::size_t phases = 0;
  TuneReport report;
};

Run tune_once(const OpBase& op, const Key& key, IsolationOptions::Mode mode) {
  cpu::CpuDevice device;
  TunerOptions options;
  options.measure.isolation.mode = mode;
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
  std::string ops = "sum,softmax,rmsnorm,sgemm";
  std::map<std::string, std::string> shapes;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--ops")) ops = argv[i + 1];
    if (!std::strcmp(argv[i], "--shape")) {
      const std::string s = argv[i + 1];
      shapes[s.substr(0, s.find('='))] = s.substr(s.find('=') + 1);
    }
  }
  cpu::ThreadPool pool;
  std::printf("%-8s %-22s %10s %10s %7s %9s %7s %9s %6s %9s %6s\n", "op", "shape", "in-proc s",
              "worker s", "phases", "ms/phase", "winner", "score w/i", "order", "score i/i",
              "order");
  std::stringstream list(ops);
  for (std::string name; std::getline(list, name, ',');) {
    const CatalogEntry& entry = find_builtin_op(name);
    auto op = entry.make(pool);
    const std::string shape = shapes.count(name) ? shapes[name] : entry.example_shape;
    const Key key = op->parse_shape(shape);
    std::vector<double> in_s, worker_s, per_phase;
    Run last_in, last_worker, again;
    for (int r = 0; r < rounds; ++r) {
      last_in = tune_once(*op, key, IsolationOptions::Mode::in_process);
      last_worker = tune_once(*op, key, IsolationOptions::Mode::worker);
      if (r + 1 == rounds) again = tune_once(*op, key, IsolationOptions::Mode::in_process);
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
