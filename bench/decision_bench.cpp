// decision_bench: how right, how stable and how fast tunekit's racing decides, beside a
// Triton-style fixed protocol (25 ms warmup + 100 ms of repeats per candidate, median), on
// the built-in CPU ops, with and without another process loading a core.
//
//   decision_bench [--reps N] [--ref-runs N] [--cap K] [--quick] [--pairs16] [--compare-waits]
//                  [--loads idle,busy,bursty] [--only OP:KEY]... [--whole-tune]
//
// --whole-tune: instead, per shape and repetition, the tune a user runs (`tunekit tune`: the
// default strategy, in memory) under each schedule, and the fixed protocol on the same points
// that tune measured (its wall time beside the tune's; no load).
//
// For every shape: --ref-runs (5) exhaustive tunekit searches give the reference (per
// candidate the median of its run medians), its winner and the set of candidates within the
// tie band of it ("agreeing", the true tie set); they are spread over the repetitions (one
// before the first, the others between), so a machine that drifts during the bench moves the
// reference too, and each measures the points in its own seeded order (strategy random over
// the whole space, the default first), so no candidate is always timed at the same point of a
// drift within a search. A space larger than --cap (48) points is measured on the same seeded
// sample of K points and the default (strategy random, evaluation budget K) by every protocol, the
// fixed one included: the whole sgemm space (1796 points) takes 225 s per fixed-protocol decision.
// Each protocol runs N times; the table gives, per protocol and load: how many winners agree, the
// count of the most frequent winner (stability), and the mean wall time per decision; "a-idle"
// counts the winners within the tie band of the idle reference (when idle was measured first): the
// decision a loaded machine should still reach. --pairs16 adds racing with the paired confirmation
// fixed at 16 pairs (as before it was sized by the gap), in the same run;
// --compare-waits adds racing that refuses and retakes readings during which the threads waited
// for a CPU (TimingOptions::retake_waited, "racing-rw"); --compare-round-warmup adds racing with
// one untimed launch before each round after the first ("racing:round_warmup=1", "racing-w1");
// --compare-placement adds racing that waits up to 2 s for the host to run the CPUs near again
// (MeasureOptions::placement.wait_seconds = 2, "racing-pw").
// Loads: "busy" = a process spinning all the time, "bursty" = one spinning 30 ms of every 100.
// On an idle load every reference run and repetition also carries a probe of the round trip of
// a cache line between the two CPUs (a VM's host runs its vCPUs near each other or far apart,
// and moves them over minutes: multi-threaded kernels that share data are up to 2x slower far
// apart); the row is then judged once more per state, each repetition against the reference
// runs of its own state (one is taken in a state that has fewer than two).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
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
// `only`: the names to measure (the capped set of a large space); empty: every candidate.
std::string fixed_protocol(const tunekit::OpBase& op, const tunekit::Key& key,
                           const std::set<std::string>& only) {
  auto workload = op.make_workload(key);
  std::string best;
  double best_median = 1e300;
  for (std::size_t i = 0; i < op.size(); ++i) {
    if (!only.empty() && !only.contains(op.candidate(i).name)) continue;
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

// One protocol's decisions at one load; judged against the reference once it is complete
// (its runs are spread over the protocols' repetitions).
struct Tally {
  std::vector<std::string> picks;
  double seconds = 0;
  void add(std::string winner, double s) {
    picks.push_back(std::move(winner));
    seconds += s;
  }
  int runs() const { return static_cast<int>(picks.size()); }
  int agreeing(const std::map<std::string, bool>& tie_set) const {
    int n = 0;
    for (const std::string& p : picks) {
      const auto it = tie_set.find(p);
      n += it != tie_set.end() && it->second;
    }
    return n;
  }
  std::string modal() const {
    std::map<std::string, int> count;
    std::string best;
    for (const std::string& p : picks)
      if (++count[p] > (best.empty() ? 0 : count[best])) best = p;
    return best;
  }
  int stability() const {
    return static_cast<int>(std::count(picks.begin(), picks.end(), modal()));
  }
};

// The reference of one load: exhaustive searches (every point, or the capped set), per
// candidate the median of its run medians; a candidate that failed in any run is out, one cut
// as hopeless keeps its partial reading.
struct Reference {
  std::map<std::string, std::vector<double>> run_medians;
  std::map<std::string, bool> failed;
  std::set<std::string> measured;  // every name a run attempted: the fixed protocol's set
  double seconds = 0;
  int runs = 0;

  void add(const tunekit::TuneReport& report) {
    seconds += report.seconds_total;
    ++runs;
    for (const auto& c : report.candidates) {
      measured.insert(c.name);
      if (c.outcome.ok())
        run_medians[c.name].push_back(c.score);
      else if (c.outcome.status == tunekit::Status::hopeless && c.timing)
        run_medians[c.name].push_back(c.timing->median);
      else
        failed[c.name] = true;
    }
  }
  std::map<std::string, double> scores() const {
    std::map<std::string, double> out;
    for (const auto& [name, medians] : run_medians) {
      if (failed.contains(name) || static_cast<int>(medians.size()) < runs) continue;
      out[name] = tunekit::stats::median(medians);
    }
    return out;
  }
};

// The machine a row ran on, in two states (idle loads only): every reference run and every
// repetition carries the cross-CPU probe taken just before it, a probe over twice the row's
// fastest is "far". A reference that mixes runs of both states judges neither (its medians fall
// between two machines), so each repetition is also judged by the reference runs of its own
// state where that state has two or more.
struct StateSplit {
  std::vector<double> ref_trips;  // one per reference run (scheduled and extra)
  std::vector<tunekit::TuneReport> ref_reports;
  std::vector<double> rep_trips;  // one per repetition

  double fastest() const {
    double f = 1e300;
    for (double t : ref_trips) f = std::min(f, t);
    for (double t : rep_trips) f = std::min(f, t);
    return f;
  }
  static bool far(double trip, double fastest) { return trip > 2 * fastest; }
  // How many reference runs a state has, by the fastest probe so far (extra runs are taken
  // while a state has fewer than two).
  int ref_runs_in(bool is_far) const {
    const double f = fastest();
    return static_cast<int>(std::count_if(ref_trips.begin(), ref_trips.end(),
                                          [&](double t) { return far(t, f) == is_far; }));
  }
};

// The winners within the tie band of a reference's best (the "agreeing" set).
std::map<std::string, bool> tie_set_of(const Reference& reference, double tie_band) {
  const std::map<std::string, double> score = reference.scores();
  double best = 1e300;
  for (const auto& [name, s] : score) best = std::min(best, s);
  std::map<std::string, bool> agrees;
  for (const auto& [name, s] : score) agrees[name] = s <= best * (1 + tie_band);
  return agrees;
}

void print_by_state(const StateSplit& split,
                    const std::vector<std::pair<std::string, Tally>>& judged, double tie_band,
                    bool verbose) {
  if (split.rep_trips.empty() || std::isnan(split.rep_trips.front())) return;
  const double fastest = split.fastest();
  std::printf(
      "%-8s %-22s %-6s cross-CPU round trip %.0f / %.0f / %.0f ns (min / median / max of "
      "the repetitions); by state:\n",
      "", "", "", *std::min_element(split.rep_trips.begin(), split.rep_trips.end()),
      tunekit::stats::median(split.rep_trips),
      *std::max_element(split.rep_trips.begin(), split.rep_trips.end()));
  for (const bool is_far : {false, true}) {
    Reference reference;
    for (std::size_t i = 0; i < split.ref_trips.size(); ++i)
      if (StateSplit::far(split.ref_trips[i], fastest) == is_far)
        reference.add(split.ref_reports[i]);
    std::vector<std::size_t> reps;
    for (std::size_t r = 0; r < split.rep_trips.size(); ++r)
      if (StateSplit::far(split.rep_trips[r], fastest) == is_far) reps.push_back(r);
    if (reps.empty()) continue;
    const char* state = is_far ? "far" : "near";
    if (reference.runs < 2) {
      std::printf("%-8s %-22s %-6s   %s: %zu repetitions, %d reference runs: not judged\n", "", "",
                  "", state, reps.size(), reference.runs);
      continue;
    }
    const std::map<std::string, bool> agrees = tie_set_of(reference, tie_band);
    std::printf("%-8s %-22s %-6s   %s: %zu repetitions, %d reference runs, tie set %d;", "", "", "",
                state, reps.size(), reference.runs,
                static_cast<int>(std::count_if(agrees.begin(), agrees.end(),
                                               [](const auto& a) { return a.second; })));
    for (const auto& [protocol, tally] : judged) {
      Tally in_state;
      for (std::size_t r : reps) in_state.add(tally.picks[r], 0);
      std::printf(" %s agree %d/%zu stability %d/%zu;", protocol.c_str(), in_state.agreeing(agrees),
                  reps.size(), in_state.stability(), reps.size());
    }
    std::printf("\n");
    if (verbose)
      for (std::size_t r : reps) {
        std::printf("    repetition %2zu: %s (%.0f ns):", r, state, split.rep_trips[r]);
        for (const auto& [protocol, tally] : judged) {
          const auto it = agrees.find(tally.picks[r]);
          std::printf(" %s %s", protocol.c_str(),
                      it != agrees.end() && it->second ? "agrees" : "differs");
        }
        std::printf("\n");
      }
  }
}

// Another process loading one core while alive: spinning all the time ("busy"), or 30 ms of
// every 100 ("bursty": a passing co-runner). A process, not a thread of this one, as a build or
// another job on the machine would be.
class CoRunner {
 public:
  explicit CoRunner(bool bursty) : pid_(::fork()) {
    if (pid_ != 0) return;
    volatile double x = 1;
    while (true) {
      const auto until = Clock::now() + std::chrono::milliseconds(30);
      while (!bursty || Clock::now() < until) x = x * 1.0000001 + 1e-9;
      ::usleep(70000);
    }
  }
  ~CoRunner() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  CoRunner(const CoRunner&) = delete;
  CoRunner& operator=(const CoRunner&) = delete;

 private:
  pid_t pid_;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// --whole-tune: the tune a user runs (default strategy, every schedule) beside the fixed
// protocol on the very points that tune measured, alternating, `reps` times per shape.
void whole_tunes(const std::vector<Shape>& shapes, int reps, tunekit::Device& device,
                 tunekit::cpu::ThreadPool& pool) {
  std::printf("%-8s %-22s %3s %-8s %9s %9s %9s %7s %10s %6s  %s\n", "op", "key", "run", "schedule",
              "tune s", "validate", "measure", "points", "fixed s", "ratio",
              "winner (tune / fixed)");
  for (const Shape& shape : shapes) {
    auto op = tunekit::find_builtin_op(shape.op).make(pool);
    const tunekit::Key key = op->parse_shape(shape.key);
    for (int r = 1; r <= reps; ++r) {
      for (const char* schedule : {"full", "racing"}) {
        tunekit::TunerOptions o;
        o.persist.store = "none";
        o.decide.schedule = schedule;
        tunekit::Tuner tuner(device, o);
        auto t0 = Clock::now();
        const tunekit::TuneReport rep = tuner.tune(*op, key);
        const double tune_seconds = seconds_since(t0);
        std::set<std::string> names;
        for (const auto& c : rep.candidates) names.insert(c.name);
        t0 = Clock::now();
        const std::string fixed_pick = fixed_protocol(*op, key, names);
        const double fixed_seconds = seconds_since(t0);
        std::printf("%-8s %-22s %3d %-8s %9.1f %9.1f %9.1f %7zu %10.1f %6.2f  %s / %s\n",
                    shape.op.c_str(), shape.key.c_str(), r, schedule, tune_seconds,
                    rep.seconds_validating, rep.seconds_measuring, names.size(), fixed_seconds,
                    tune_seconds / fixed_seconds, rep.winner_name.c_str(), fixed_pick.c_str());
        std::fflush(stdout);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  int ref_runs = 5;
  std::size_t cap = 48;
  bool quick = false;
  bool verbose = false;
  bool pairs16 = false;
  bool compare_waits = false;
  bool compare_round_warmup = false;
  bool compare_placement = false;
  bool whole_tune = false;
  std::vector<std::string> loads{"idle", "busy"};
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--ref-runs") && i + 1 < argc)
      ref_runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--cap") && i + 1 < argc)
      cap = static_cast<std::size_t>(std::max(0, std::atoi(argv[++i])));
    else if (!std::strcmp(argv[i], "--pairs16"))
      pairs16 = true;
    else if (!std::strcmp(argv[i], "--compare-waits"))
      compare_waits = true;
    else if (!std::strcmp(argv[i], "--compare-round-warmup"))
      compare_round_warmup = true;
    else if (!std::strcmp(argv[i], "--compare-placement"))
      compare_placement = true;
    else if (!std::strcmp(argv[i], "--whole-tune"))
      whole_tune = true;
    else if (!std::strcmp(argv[i], "--loads") && i + 1 < argc)
      loads = split(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only.emplace_back(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--verbose"))
      verbose = true;
    else {
      std::fprintf(
          stderr,
          "usage: decision_bench [--reps N] [--ref-runs N] [--cap K] [--quick] [--pairs16] "
          "[--compare-waits] [--compare-round-warmup] [--compare-placement] "
          "[--loads idle,busy,bursty] "
          "[--only OP:KEY]... [--whole-tune] "
          "[--verbose]\n");
      return 2;
    }
  }
  std::vector<Shape> shapes{{"sgemm", "m=128,n=128,k=128"},
                            {"sgemm", "m=256,n=256,k=256"},
                            {"softmax", "rows=256,cols=1024"},
                            {"softmax", "rows=1024,cols=4096"},
                            {"sgemm", "m=512,n=512,k=512"},
                            {"rmsnorm", "rows=1024,cols=4096"},
                            {"sum", "n=1048576"}};
  if (quick) shapes.resize(2);
  if (!only.empty()) {
    std::vector<Shape> picked;
    for (const std::string& o : only) {
      const auto colon = o.find(':');
      if (colon == std::string::npos) {
        std::fprintf(stderr, "decision_bench: --only OP:KEY, e.g. sum:n=1048576\n");
        return 2;
      }
      picked.push_back({o.substr(0, colon), o.substr(colon + 1)});
    }
    shapes = std::move(picked);
  }

  tunekit::cpu::ThreadPool pool(0);
  tunekit::cpu::CpuDevice device;
  if (whole_tune) {
    whole_tunes(shapes, reps, device, pool);
    return 0;
  }
  std::printf(
      "decision_bench: %d repetitions per protocol and load, %d reference runs spread "
      "over them, device %s, %d threads\n\n",
      reps, ref_runs, device.identity().product.c_str(), pool.size());
  std::printf("%-8s %-22s %-6s %-10s %7s %7s %9s %10s  %s\n", "op", "key", "load", "protocol",
              "agree", "a-idle", "stability", "wall/run",
              "most frequent pick (its reference reading vs the reference winner's)");
  for (const Shape& shape : shapes) {
    auto op = tunekit::find_builtin_op(shape.op).make(pool);
    tunekit::Key key = op->parse_shape(shape.key);
    // A space too large to time in full at every repetition (the fixed protocol alone would take
    // 125 ms x its size): every protocol measures the same `cap` points beside the default, a
    // seeded uniform sample (strategy random, evaluation budget `cap`, the tuner's seed 1).
    const bool capped = cap > 0 && op->size() > cap;
    const std::string strategy = capped ? "random" : "exhaustive";
    if (capped)
      std::printf(
          "%-8s %-22s %zu points: every protocol measures the same %zu sampled ones and "
          "the default\n",
          shape.op.c_str(), shape.key.c_str(), op->size(), cap);
    auto with_space = [&](tunekit::TunerOptions o) {
      o.decide.strategy = strategy;
      if (capped) o.decide.budget_evaluations = cap;
      return o;
    };

    // The protocols beside the fixed one: racing as it ships, and the variants asked for.
    std::vector<std::pair<std::string, tunekit::TunerOptions>> protocols;
    tunekit::TunerOptions racing = with_space({});
    racing.decide.schedule = "racing";
    protocols.emplace_back("racing", racing);
    if (pairs16) {
      // The confirmation as it was before it was sized: always confirm_pairs (16) pairs.
      tunekit::TunerOptions sixteen = racing;
      sixteen.decide.paired.min_pairs = sixteen.decide.confirm_pairs;
      protocols.emplace_back("racing-16", sixteen);
    }
    if (compare_waits) {
      // Readings that waited for a CPU refused and taken again (opt-in).
      tunekit::TunerOptions retaking = racing;
      retaking.measure.timing.retake_waited = true;
      protocols.emplace_back("racing-rw", retaking);
    }
    if (compare_round_warmup) {
      // One untimed launch before each racing round after the first.
      tunekit::TunerOptions warm = racing;
      warm.decide.schedule = "racing:round_warmup=1";
      protocols.emplace_back("racing-w1", warm);
    }
    if (compare_placement) {
      // Racing that waits up to 2 s for the host to run the CPUs near again (opt-in).
      tunekit::TunerOptions guarded = racing;
      guarded.measure.placement.wait_seconds = 2;
      protocols.emplace_back("racing-pw", guarded);
    }
    tunekit::TunerOptions exhaustive = with_space({});
    exhaustive.decide.confirm_pairs = 0;
    const double tie_band = exhaustive.decide.tie_band;
    // Each reference run measures every point in its own seeded order (the default first):
    // one window per candidate, one after another, ranks a candidate at its place in the
    // machine's drift (docs/performance.md), so the order must not be the same in every run.
    // A capped space keeps the protocols' sample, in its one order.
    auto reference_run = [&](int run) {
      tunekit::TunerOptions o = exhaustive;
      if (capped) return o;
      o.decide.strategy = "random";
      o.decide.seed = 1000 + static_cast<std::uint64_t>(run);
      return o;
    };

    std::map<std::string, bool> agrees_idle;  // by the idle reference, once measured
    for (const std::string& load : loads) {
      std::unique_ptr<CoRunner> co_runner;
      if (load != "idle") co_runner = std::make_unique<CoRunner>(load == "bursty");
      // The reference runs are spread over the repetitions (one before the first, the others
      // evenly between), so that a machine that drifts during the bench moves the reference
      // with the protocols it judges.
      Reference reference;
      std::vector<Tally> tallies(protocols.size());
      Tally fixed;
      int retaken = 0, waited = 0;
      double pairs_sized = 0;
      int next_ref = 0;
      // Idle only: under a co-runner the probe's pinned threads wait for their time slices.
      const bool split_states = load == "idle";
      StateSplit split;
      // A reference run's placement: the one its search read before it began (the tuner
      // probes around every search; 0 there: it could not tell).
      auto run_reference = [&](int run, bool scheduled) {
        tunekit::Tuner tuner(device, reference_run(run));
        tunekit::TuneReport report = tuner.tune(*op, key);
        if (scheduled) reference.add(report);
        if (!split_states) return;
        const double trip = report.cpu_placement.before_ns;
        split.ref_trips.push_back(trip > 0 ? trip : std::nan(""));
        split.ref_reports.push_back(std::move(report));
      };
      for (int r = 0; r <= reps; ++r) {
        while (next_ref < ref_runs && (r == reps || next_ref * reps <= r * ref_runs)) {
          run_reference(next_ref, true);
          ++next_ref;
        }
        if (r == reps) break;
        if (split_states) {
          const double trip = tunekit::cpu::cross_cpu_round_trip_ns();
          split.rep_trips.push_back(trip);
          // A state with fewer than two reference runs gets one now, in the state just probed
          // (outside the table's reference: its runs stay the scheduled ones).
          if (!std::isnan(trip) && split.ref_runs_in(StateSplit::far(trip, split.fastest())) < 2)
            run_reference(ref_runs + r, false);
        }
        for (std::size_t p = 0; p < protocols.size(); ++p) {
          tunekit::Tuner tuner(device, protocols[p].second);  // a fresh tuner: nothing in memory
          const auto t0 = Clock::now();
          const tunekit::TuneReport rep = tuner.tune(*op, key);
          tallies[p].add(rep.winner_name, seconds_since(t0));
          if (p != 0) continue;
          pairs_sized += rep.paired_pairs;
          for (const auto& c : rep.candidates)
            if (c.timing) retaken += c.timing->retaken, waited += c.timing->waited;
          if (verbose && !rep.reason.empty()) std::printf("    racing: %s\n", rep.reason.c_str());
        }
        const auto t0 = Clock::now();
        std::string w =
            fixed_protocol(*op, key, capped ? reference.measured : std::set<std::string>{});
        fixed.add(std::move(w), seconds_since(t0));
      }

      const std::map<std::string, double> ref_score = reference.scores();
      std::string ref_winner;
      for (const auto& [name, score] : ref_score)
        if (ref_winner.empty() || score < ref_score.at(ref_winner)) ref_winner = name;
      const double ref_best = ref_winner.empty() ? std::nan("") : ref_score.at(ref_winner);
      const std::map<std::string, bool> agrees = tie_set_of(reference, tie_band);
      const int tie_set = static_cast<int>(
          std::count_if(agrees.begin(), agrees.end(), [](const auto& a) { return a.second; }));
      if (load == "idle") agrees_idle = agrees;
      // How far a pick is from the reference winner, in the reference's readings.
      auto off = [&](const std::string& name) {
        auto it = ref_score.find(name);
        return it == ref_score.end() ? std::nan("") : 100 * (it->second / ref_best - 1);
      };
      auto print = [&](const std::string& name, const Tally& tally) {
        std::printf("%-8s %-22s %-6s %-10s %3d/%-3d %3d/%-3d %5d/%-3d %8.2f s  %s (%+.1f %%)\n",
                    shape.op.c_str(), shape.key.c_str(), load.c_str(), name.c_str(),
                    tally.agreeing(agrees), tally.runs(), tally.agreeing(agrees_idle), tally.runs(),
                    tally.stability(), tally.runs(), tally.seconds / tally.runs(),
                    tally.modal().c_str(), off(tally.modal()));
      };
      for (std::size_t p = 0; p < protocols.size(); ++p) print(protocols[p].first, tallies[p]);
      print("fixed", fixed);
      std::printf(
          "%-8s %-22s %-6s racing/fixed wall time: %.1f %%; reference winner %s (%.3g s, "
          "median of %d exhaustive runs%s, %.2f s each, %zu points), tie set %d; racing confirmed "
          "with %.1f pairs on average; readings that waited for a CPU: %.1f kept, %.1f retaken "
          "per run\n",
          "", "", load.c_str(), 100 * tallies[0].seconds / fixed.seconds, ref_winner.c_str(),
          ref_best, reference.runs, capped ? " in the sample's order" : " in shuffled orders",
          reference.seconds / reference.runs, reference.measured.size(), tie_set,
          pairs_sized / reps, static_cast<double>(waited) / reps,
          static_cast<double>(retaken) / reps);
      std::vector<std::pair<std::string, Tally>> judged;
      for (std::size_t p = 0; p < protocols.size(); ++p)
        judged.emplace_back(protocols[p].first, tallies[p]);
      judged.emplace_back("fixed", fixed);
      if (split_states) print_by_state(split, judged, tie_band, verbose);
      if (verbose)
        for (const std::string& name : {ref_winner, tallies[0].modal(), fixed.modal()}) {
          const auto it = reference.run_medians.find(name);
          if (it == reference.run_medians.end()) continue;
          std::printf("    reference runs of %s:", name.c_str());
          for (double m : it->second) std::printf(" %.4g", m);
          std::printf(" s\n");
        }
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  return 0;
}
