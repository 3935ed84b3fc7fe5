// decision_bench: how right, how stable and how fast tunekit's racing decides, beside a
// Triton-style fixed protocol (25 ms warmup + 100 ms of repeats per candidate, median), on
// the built-in CPU ops, with and without a busy loop on another core.
//
//   decision_bench [--reps N] [--quick]
//
// For every shape: an exhaustive tunekit search gives the reference winner and the set of
// candidates within the tie band of it ("agreeing"). Then each protocol runs N times; the
// table gives, per protocol and load: how many winners agree, the count of the most frequent
// winner (stability), and the mean wall time per decision.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/stats.hpp"
#include "tunekit/tuner.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Shape {
  std::string op;
  std::string key;
};

// Triton's do_bench in spirit: warm up for 25 ms, repeat for 100 ms, take the median; the
// lowest median wins. No validation, no tie band.
std::string fixed_protocol(const tunekit::OpBase& op, const tunekit::Key& key) {
  auto workload = op.make_workload(key);
  std::string best;
  double best_median = 1e300;
  for (std::size_t i = 0; i < op.size(); ++i) {
    if (op.candidate(i).numerics > tunekit::Numerics::reassociates) continue;
    if (op.candidate(i).eligible && op.candidate(i).eligible(key)) continue;
    auto start = Clock::now();
    while (seconds_since(start) < 0.025) workload->run_candidate(i);
    std::vector<double> times;
    start = Clock::now();
    while (seconds_since(start) < 0.100) {
      auto t0 = Clock::now();
      workload->run_candidate(i);
      times.push_back(seconds_since(t0));
    }
    double m = tunekit::stats::median(times);
    if (m < best_median) {
      best_median = m;
      best = op.candidate(i).name;
    }
  }
  return best;
}

struct Tally {
  int agree = 0;
  std::map<std::string, int> winners;
  double seconds = 0;
  int runs = 0;
  void add(const std::string& winner, bool agrees, double s) {
    agree += agrees;
    ++winners[winner];
    seconds += s;
    ++runs;
  }
  int stability() const { return winners.at(modal()); }
  std::string modal() const {
    std::string best;
    int most = 0;
    for (const auto& [w, n] : winners)
      if (n > most) {
        most = n;
        best = w;
      }
    return best;
  }
};

// Spins on one core while alive: "the other core loaded".
class BusyLoop {
 public:
  BusyLoop()
      : thread_([this] {
          volatile double x = 1;
          while (!stop_.load(std::memory_order_relaxed)) x = x * 1.0000001 + 1e-9;
        }) {}
  ~BusyLoop() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  bool quick = false;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--verbose"))
      verbose = true;
    else {
      std::fprintf(stderr, "usage: decision_bench [--reps N] [--quick] [--verbose]\n");
      return 2;
    }
  }
  std::vector<Shape> shapes{{"sgemm", "m=128,n=128,k=128"},
                            {"sgemm", "m=256,n=256,k=256"},
                            {"softmax", "rows=256,cols=1024"},
                            {"softmax", "rows=1024,cols=4096"}};
  if (quick) shapes.resize(2);

  tunekit::cpu::ThreadPool pool(0);
  tunekit::cpu::CpuDevice device;
  std::printf("decision_bench: %d repetitions per protocol and load, device %s, %d threads\n\n",
              reps, device.identity().product.c_str(), pool.size());
  std::printf("%-8s %-22s %-6s %-10s %7s %9s %10s  %s\n", "op", "key", "load", "protocol", "agree",
              "stability", "wall/run",
              "most frequent pick (its exhaustive reading vs the winner's)");
  for (const Shape& shape : shapes) {
    auto op = tunekit::find_builtin_op(shape.op).make(pool);
    tunekit::Key key = op->parse_shape(shape.key);

    for (bool loaded : {false, true}) {
      std::unique_ptr<BusyLoop> busy;
      if (loaded) busy = std::make_unique<BusyLoop>();
      // The reference, under the same load: an exhaustive search; agreeing = within the tie
      // band of its winner.
      tunekit::TunerOptions reference;
      reference.decide.strategy = "exhaustive";
      reference.decide.confirm_pairs = 0;
      tunekit::Tuner exhaustive(device, reference);
      tunekit::TuneReport ref = exhaustive.tune(*op, key);
      std::map<std::string, bool> agrees;
      std::map<std::string, double> ref_score;
      for (const auto& c : ref.candidates) {
        agrees[c.name] = c.outcome.ok() && c.score <= ref.winner_score * (1 + ref.tie_band);
        if (c.outcome.ok()) ref_score[c.name] = c.score;
      }
      // How far a pick is from the exhaustive winner, in the exhaustive run's own readings.
      auto off = [&](const std::string& name) {
        auto it = ref_score.find(name);
        return it == ref_score.end() ? 0.0 : 100 * (it->second / ref.winner_score - 1);
      };

      Tally racing, fixed;
      for (int r = 0; r < reps; ++r) {
        tunekit::TunerOptions o;
        o.decide.schedule = "racing";
        tunekit::Tuner tuner(device, o);  // a fresh tuner: nothing in memory
        auto t0 = Clock::now();
        tunekit::TuneReport rep = tuner.tune(*op, key);
        racing.add(rep.winner_name, agrees[rep.winner_name], seconds_since(t0));
        if (verbose && !rep.reason.empty()) std::printf("    racing: %s\n", rep.reason.c_str());
        t0 = Clock::now();
        std::string w = fixed_protocol(*op, key);
        fixed.add(w, agrees[w], seconds_since(t0));
      }
      for (auto [name, tally] : {std::pair{"racing", &racing}, std::pair{"fixed", &fixed}}) {
        std::printf("%-8s %-22s %-6s %-10s %3d/%-3d %5d/%-3d %8.2f s  %s (%+.1f %%)\n",
                    shape.op.c_str(), shape.key.c_str(), loaded ? "busy" : "idle", name,
                    tally->agree, tally->runs, tally->stability(), tally->runs,
                    tally->seconds / tally->runs, tally->modal().c_str(), off(tally->modal()));
      }
      std::printf(
          "%-8s %-22s %-6s racing/fixed wall time: %.1f %%; exhaustive winner %s (%.3g s), "
          "exhaustive search %.2f s\n",
          "", "", loaded ? "busy" : "idle", 100 * racing.seconds / fixed.seconds,
          ref.winner_name.c_str(), ref.winner_score, ref.seconds_total);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  return 0;
}
