// What serving a stored choice costs on its first call in a process (issue #13): every
// built-in CPU op is tuned once into a fresh store on its example shape; then, per round, a
// new tuner in mode cached serves the key: its first select (store read + one validation run
// of the stored winner, in a worker process or in process), the store read alone (what the
// first call cost before re-validation), and the next select (a memory hit).
//   ./bin/serve_bench [--rounds 5] [--ops sum,softmax,rmsnorm,sgemm]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/tuner.hpp"

namespace {

using namespace tunekit;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Row {
  std::string op;
  std::string winner;
  double search = 0;
  std::vector<double> first_worker, first_in_process, store_read, hit;
};

double first_select(cpu::CpuDevice& device, TunerOptions options, const OpBase& op, const Key& key,
                    IsolationOptions::Mode mode) {
  options.decide.mode = Mode::cached;
  options.measure.isolation.mode = mode;
  Tuner tuner(device, options);  // opening the store is not the first call's cost
  const auto start = Clock::now();
  const Choice c = tuner.select(op, key);
  const double took = seconds_since(start);
  if (c.source != Source::cache_replay)
    std::fprintf(stderr, "%s: not replayed\n", op.name().c_str());
  return took;
}

Row measure(const CatalogEntry& entry, cpu::ThreadPool& pool, const std::string& store,
            int rounds) {
  std::unique_ptr<OpBase> op = entry.make(pool);
  const Key key = op->parse_shape(entry.example_shape);
  cpu::CpuDevice device;
  TunerOptions options;
  options.persist.store = "sqlite:" + store;
  Row row{entry.name};
  {
    const auto start = Clock::now();
    TuneReport r = Tuner(device, options).tune(*op, key);
    row.search = seconds_since(start);
    row.winner = r.winner_name;
  }
  for (int round = 0; round < rounds; ++round) {
    row.first_worker.push_back(
        first_select(device, options, *op, key, IsolationOptions::Mode::worker));
    row.first_in_process.push_back(
        first_select(device, options, *op, key, IsolationOptions::Mode::in_process));
    Tuner tuner(device, options);
    const std::string digest = tuner.identity(*op, key).digest().hex();
    auto start = Clock::now();
    auto stored = tuner.store()->find(digest);
    if (stored) (void)op->find(stored->winner);
    row.store_read.push_back(seconds_since(start));
    (void)tuner.select(*op, key);
    start = Clock::now();
    (void)tuner.select(*op, key);
    row.hit.push_back(seconds_since(start));
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::string only = "sum,softmax,rmsnorm,sgemm";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--ops") == 0) only = argv[i + 1];
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tunekit-serve-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  cpu::ThreadPool pool(0);
  std::printf("%-8s %-22s %10s %14s %14s %12s %10s\n", "op", "winner", "search s", "first worker",
              "first in-proc", "store read", "hit");
  std::stringstream names(only);
  for (std::string name; std::getline(names, name, ',');) {
    const std::string store = (dir / (name + ".db")).string();
    const Row r = measure(find_builtin_op(name), pool, store, rounds);
    std::printf("%-8s %-22s %10.2f %11.2f ms %11.2f ms %9.1f us %7.0f ns\n", r.op.c_str(),
                r.winner.c_str(), r.search, 1e3 * median(r.first_worker),
                1e3 * median(r.first_in_process), 1e6 * median(r.store_read), 1e9 * median(r.hit));
  }
  std::filesystem::remove_all(dir);
  return 0;
}
