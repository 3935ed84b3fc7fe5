// sgemm_suite: the CPU sgemm over 12 shapes (square 256-2048, skinny m or n against large
// n·k, small k, rectangular): per shape OpenBLAS's best GFLOP/s (over its thread counts), the
// best own kernel's (a survey of the space, timed here), the tuner's pick (Tuner::tune as a
// user calls it) with its GFLOP/s and tune time, and whether the pick reaches 0.98× the best
// of the two (docs/performance.md).
//
//   sgemm_suite [--shapes 1,3,12] [--sample N] [--refine R] [--seed S] [--strategy SPEC]
//               [--budget SECONDS] [--threads P] [--calibrate | --profile FILE] [--no-tuner]
//               [--same-process] [--log-rounds] [--pause SECONDS] [--settle SECONDS]
//               [--finalists N] [--isolation MODE]
//
// Each shape runs in its own process (this program again, `--shapes N --row-only`) unless
// --same-process: a shape then finds nothing an earlier one left behind (OpenBLAS's threads,
// the pool's, the heap).
//
// --calibrate measures this machine's envelope first (quick calibration) and --profile reads
// one (`tunekit calibrate` writes it), so the tuner's cost model can rank (the `model`
// strategy); without either the model declines and `model` proposes in enumeration order.
//
// The survey of the own kernels times ikj, naive (only where m·n·k <= 2^27: it runs at about
// 1 GFLOP/s), every micro-kernel × loop order at one mid blocking, a seeded sample of N packed
// points and R rounds of the Hamming neighbours of the best packed point so far: it is a lower
// bound of the best own kernel, not an exhaustive search (1792 packed points on 2 threads).
// Every timed point is validated against the reference first. The final figures come from
// five interleaved rounds over the best OpenBLAS point, the best own point and the pick
// (best median of the rounds, the survey's own readings left out), so a drift in machine load
// hits all three alike;
// --log-rounds prints each round's medians, --pause waits that long between the tune and them.
// --settle sets the tuner's TimingOptions::settle_seconds (0: the tuner does not wait out
// threads a candidate left spinning before a window; default: the library's).
// --finalists sets DecideOptions::finalists (0: no final race; default: the library's).
// --isolation sets where the tuner's trials run (automatic, worker, in_process; the survey and
// the final rounds always time in this process).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sgemm/sgemm.hpp"
#include "tunekit/calibration.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/space.hpp"
#include "tunekit/timing.hpp"
#include "tunekit/tuner.hpp"
#include "tunekit/validate.hpp"

namespace {

using namespace tunekit;
using WallClock = std::chrono::steady_clock;

double seconds_since(WallClock::time_point t) {
  return std::chrono::duration<double>(WallClock::now() - t).count();
}

struct Shape {
  std::int64_t m, n, k;
  const char* kind;
};

const Shape kShapes[] = {
    {256, 256, 256, "square"},        {512, 512, 512, "square"},
    {1024, 1024, 1024, "square"},     {2048, 2048, 2048, "square"},
    {1, 2048, 2048, "skinny m"},      {16, 2048, 2048, "skinny m"},
    {64, 2048, 2048, "skinny m"},     {2048, 16, 2048, "skinny n"},
    {1024, 1024, 16, "small k"},      {2048, 2048, 64, "small k"},
    {4096, 256, 1024, "rectangular"}, {256, 4096, 1024, "rectangular"},
};

double load_average() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

// Times points of one workload with the tuner's instrument, validating each first.
class Survey {
 public:
  Survey(const OpBase& op, const Key& key, cpu::CpuDevice& device)
      : op_(op),
        key_(key),
        device_(device),
        workload_(op.make_workload(key)),
        reference_(Reference::capture(*workload_, true, op.default_index(key))),
        tolerance_(op.tolerance(key)) {
    options_.repeats_floor = 8;
    options_.max_runs = 32;
  }

  // Median seconds per call; +inf when the point fails validation or its timing.
  double time(std::size_t index) {
    if (auto it = seconds_.find(index); it != seconds_.end()) return it->second;
    double s = 1e300;
    const Outcome valid = reference_.check(*workload_, index, tolerance_);
    if (!valid.ok()) {
      std::fprintf(stderr, "  %s failed validation: %s\n", op_.candidate(index).name.c_str(),
                   valid.message.c_str());
    } else {
      s = measure(index);
    }
    seconds_[index] = s;
    return s;
  }

  // A fresh median, not memoised (the interleaved final rounds).
  double measure(std::size_t index) {
    auto trial = device_.make_trial(*workload_, index);
    if (!trial->build().ok() || !trial->prepare().ok()) return 1e300;
    device_.settle(options_.settle_seconds);  // as the tuner does: OpenBLAS's threads spin on
    const TimingResult r = time_routine(*trial, device_.clock(), options_);
    trial->release();
    return r.ok() ? r.median : 1e300;
  }

  std::size_t best_of(const std::vector<std::size_t>& indices) {
    std::size_t best = indices.front();
    for (std::size_t i : indices)
      if (time(i) < time(best)) best = i;
    return best;
  }
  const std::map<std::size_t, double>& timed() const { return seconds_; }

 private:
  const OpBase& op_;
  Key key_;
  cpu::CpuDevice& device_;
  std::unique_ptr<Workload> workload_;
  Reference reference_;
  Tolerance tolerance_;
  TimingOptions options_;
  std::map<std::size_t, double> seconds_;
};

std::string short_name(const Config& c) {
  const std::string& algo = c["algo"].as_string();
  if (algo == "ikj" || algo == "naive") return algo;
  const std::string t = "t" + c["threads"].text();
  if (algo == "openblas") return "openblas " + t;
  return c["mr"].text() + "x" + c["nr"].text() + " " + c["mc"].text() + "/" + c["kc"].text() + "/" +
         c["nc"].text() + " " + c["order"].as_string() + " " + t;
}

// One word for /bin/sh.
std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs each shape's row in a process of its own and echoes the rows; counts the rows and
// those that met the goal. False when a process could not be started.
bool rows_in_own_processes(int argc, char** argv, const std::vector<int>& shapes, int& rows,
                           int& met) {
  // This program's own path: /proc/self/exe read here, not by the shell (it would be /bin/sh).
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    std::fprintf(stderr, "sgemm_suite: /proc/self/exe: %s\n", error.message().c_str());
    return false;
  }
  std::string base = shell_quoted(self.string());
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--shapes")) {
      ++i;  // replaced per process
      continue;
    }
    base += " " + shell_quoted(argv[i]);
  }
  for (int shape : shapes) {
    const std::string command = base + " --shapes " + std::to_string(shape) + " --row-only";
    std::fflush(stdout);
    FILE* child = popen(command.c_str(), "r");
    if (!child) {
      std::perror("sgemm_suite: popen");
      return false;
    }
    char line[4096];
    while (std::fgets(line, sizeof line, child)) {
      std::fputs(line, stdout);
      std::fflush(stdout);
      rows += line[0] == '|';
      met += std::strstr(line, "| met |") != nullptr;
    }
    if (const int status = pclose(child); status != 0)
      std::fprintf(stderr, "  shape %d: its process ended with status %d\n", shape, status);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::set<int> only;
  std::size_t sample = 48;
  int refine = 2;
  std::uint64_t seed = 1;
  std::string strategy;  // empty: the tuner's default
  double budget = 60;
  int threads = 0;
  bool tuner = true;
  bool calibrate_first = false;
  bool same_process = false;
  bool row_only = false;  // a child of rows_in_own_processes: its table rows only
  bool log_rounds = false;
  double pause = 0;
  double settle = -1;       // -1: the library's default
  int race_finalists = -1;  // -1: the library's default
  std::optional<IsolationOptions::Mode> isolation;
  std::string profile;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--shapes")) {
      std::stringstream list(next());
      for (std::string item; std::getline(list, item, ',');) only.insert(std::atoi(item.c_str()));
    } else if (!std::strcmp(argv[i], "--sample")) {
      sample = static_cast<std::size_t>(std::atol(next()));
    } else if (!std::strcmp(argv[i], "--refine")) {
      refine = std::atoi(next());
    } else if (!std::strcmp(argv[i], "--seed")) {
      seed = std::strtoull(next(), nullptr, 10);
    } else if (!std::strcmp(argv[i], "--strategy")) {
      strategy = next();
    } else if (!std::strcmp(argv[i], "--budget")) {
      budget = std::atof(next());
    } else if (!std::strcmp(argv[i], "--threads")) {
      threads = std::atoi(next());
    } else if (!std::strcmp(argv[i], "--calibrate")) {
      calibrate_first = true;
    } else if (!std::strcmp(argv[i], "--profile")) {
      profile = next();
    } else if (!std::strcmp(argv[i], "--no-tuner")) {
      tuner = false;
    } else if (!std::strcmp(argv[i], "--same-process")) {
      same_process = true;
    } else if (!std::strcmp(argv[i], "--row-only")) {
      row_only = true;
    } else if (!std::strcmp(argv[i], "--log-rounds")) {
      log_rounds = true;
    } else if (!std::strcmp(argv[i], "--pause")) {
      pause = std::clamp(std::atof(next()), 0.0, 600.0);
    } else if (!std::strcmp(argv[i], "--settle")) {
      settle = std::clamp(std::atof(next()), 0.0, 60.0);
    } else if (!std::strcmp(argv[i], "--finalists")) {
      race_finalists = std::clamp(std::atoi(next()), 0, 1000);
    } else if (!std::strcmp(argv[i], "--isolation")) {
      isolation = isolation_mode_from_string(next());
      if (!isolation) {
        std::fprintf(stderr, "--isolation: automatic, worker or in_process\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: sgemm_suite [--shapes 1,3,12] [--sample N] [--refine R] [--seed S] "
                   "[--strategy SPEC] [--budget SECONDS] [--threads P] [--calibrate | --profile "
                   "FILE] [--no-tuner] [--same-process] [--log-rounds] [--pause SECONDS] "
                   "[--settle SECONDS] [--finalists N] [--isolation MODE]\n");
      return 2;
    }
  }

  cpu::ThreadPool pool(threads);
  const auto typed = kernels::make_sgemm_op_typed(pool);
  const OpBase& op = *typed;
  cpu::CpuDevice device;
  const Enumeration& space = op.enumeration();
  std::vector<std::size_t> openblas, packed, plain;
  for (std::size_t i = 0; i < op.size(); ++i) {
    const std::string algo =
        op.candidate(i).config["algo"].as_string();  // a copy: candidate() is a value
    (algo == "openblas" ? openblas : algo == "packed" ? packed : plain).push_back(i);
  }
  std::vector<int> selected;
  for (int shape = 1; shape <= static_cast<int>(std::size(kShapes)); ++shape)
    if (only.empty() || only.count(shape)) selected.push_back(shape);
  const bool own_processes = !row_only && !same_process && selected.size() > 1;
  std::optional<Envelope> envelope;
  if (calibrate_first && !own_processes) {
    const auto probe = cpu::make_calibration_probe(pool);
    CalibrationOptions quick;
    quick.quick = true;
    envelope = calibrate(*probe, quick).envelope;
    std::printf(
        "envelope (quick calibration): peak %.1f / %.1f GFLOP/s (1 / %d threads), "
        "DRAM %.1f GB/s, cache %.0f KiB\n",
        envelope->peak_flops_1.value / 1e9, envelope->peak_flops_all.value / 1e9, envelope->threads,
        envelope->dram_bw_all.value / 1e9, envelope->cache_bytes.value / 1024);
  }
  if (!row_only) {
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    std::printf("OpenBLAS: %s; OPENBLAS_CORETYPE=%s\n", kernels::openblas_description().c_str(),
                coretype ? coretype : "(unset)");
    std::printf(
        "pool %d threads, space %zu points (%zu packed), survey: %zu sampled + %d "
        "refinement rounds, seed %llu; tuner: %s, budget %.0f s; %s\n\n",
        pool.size(), op.size(), packed.size(), sample, refine,
        static_cast<unsigned long long>(seed),
        tuner ? (strategy.empty() ? "default strategy" : strategy.c_str()) : "off", budget,
        own_processes ? "each shape in its own process" : "one process");
    std::printf(
        "| # | shape (m×n×k) | kind | OpenBLAS GFLOP/s | best own GFLOP/s (point) | pick "
        "| pick GFLOP/s | pick / best | tune s | measured | met | load |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::fflush(stdout);
  }
  if (own_processes) {
    int rows = 0, met = 0;
    if (!rows_in_own_processes(argc, argv, selected, rows, met)) return 1;
    if (tuner) std::printf("\ngoal (pick >= 0.98x best) met on %d of %d shapes\n", met, rows);
    return 0;
  }

  int met = 0, shapes = 0;
  for (std::size_t s = 0; s < std::size(kShapes); ++s) {
    if (!only.empty() && !only.count(static_cast<int>(s) + 1)) continue;
    const Shape& shape = kShapes[s];
    const Key key =
        op.parse_shape("m=" + std::to_string(shape.m) + ",n=" + std::to_string(shape.n) +
                       ",k=" + std::to_string(shape.k));
    const double flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                         static_cast<double>(shape.k);
    const double load_before = load_average();
    Survey survey(op, key, device);

    // The library at every thread count.
    const std::size_t best_blas = survey.best_of(openblas);
    // The own kernels: ikj, naive where it is cheap, one point per micro-kernel × order (mid
    // blocking, every thread count), a seeded sample, then the neighbours of the best.
    std::vector<std::size_t> own;
    for (std::size_t i : plain) {
      const bool naive = op.candidate(i).config["algo"].as_string() == "naive";
      if (!naive || flops / 2 <= 0x1p27) own.push_back(i);
    }
    for (std::size_t i : packed) {
      const Config c = op.candidate(i).config;
      if (c["mc"].as_int() == 96 && c["kc"].as_int() == 256 && c["nc"].as_int() == 1024)
        own.push_back(i);
    }
    Rng rng(seed + s);
    std::vector<std::size_t> shuffled = packed;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    own.insert(own.end(), shuffled.begin(),
               shuffled.begin() + static_cast<std::ptrdiff_t>(std::min(sample, shuffled.size())));
    std::size_t best_own = survey.best_of(own);
    auto is_own = [&](std::size_t i) {
      return op.candidate(i).config["algo"].as_string() != "openblas";
    };
    for (int round = 0; round < refine; ++round) {
      std::size_t best_packed = packed.front();
      double best_packed_seconds = 1e301;
      for (const auto& [i, t] : survey.timed()) {
        if (op.candidate(i).config["algo"].as_string() == "packed" && t < best_packed_seconds) {
          best_packed = i;
          best_packed_seconds = t;
        }
      }
      const std::vector<std::size_t> near = space.neighbours(best_packed, Neighbourhood::hamming);
      if (near.empty()) break;
      survey.best_of(near);
    }
    for (const auto& [i, t] : survey.timed())
      if (is_own(i) && t < survey.time(best_own)) best_own = i;

    // The tuner, as a user calls it: a fresh in-memory tuner, a budget.
    std::string pick_name = "-";
    std::size_t pick = best_own;
    double tune_seconds = 0;
    std::size_t evaluated = 0;
    TuneReport tuner_report;
    if (tuner) {
      TunerOptions options;
      options.persist.store = "none";
      if (!strategy.empty()) options.decide.strategy = strategy;
      options.decide.budget_seconds = budget;
      options.decide.seed = seed;
      if (envelope) options.model.envelope = envelope;
      options.model.profile = profile;
      if (settle >= 0) options.measure.timing.settle_seconds = settle;
      if (race_finalists >= 0) options.decide.finalists = race_finalists;
      if (isolation) options.measure.isolation.mode = *isolation;
      Tuner t(device, options);
      const auto start = WallClock::now();
      tuner_report = t.tune(op, key);
      const TuneReport& report = tuner_report;
      tune_seconds = seconds_since(start);
      pick = report.winner;
      pick_name = short_name(op.candidate(pick).config);
      evaluated = report.candidates.size();
      if (report.budget.cut) pick_name += " (budget cut)";
      // The candidates timed right after an OpenBLAS one (its threads spin ~0.1 s after a call:
      // Device::settle waits them out unless --settle 0): what the tuner read, and how many of
      // those readings waited for a CPU.
      for (std::size_t c = 1; c < report.candidates.size(); ++c) {
        const CandidateReport& before = report.candidates[c - 1];
        const CandidateReport& after = report.candidates[c];
        if (is_own(before.index) || !is_own(after.index) || !after.timing) continue;
        std::fprintf(stderr, "  shape %zu: after %s: %s read %.4g ms, %d of %zu waited\n", s + 1,
                     short_name(op.candidate(before.index).config).c_str(),
                     short_name(op.candidate(after.index).config).c_str(),
                     after.timing->median * 1e3, after.timing->waited,
                     after.timing->samples.size());
      }
      std::fprintf(
          stderr, "  shape %zu: %s, %zu points touched, stop: %s%s%s; decision: %s\n", s + 1,
          report.strategy.c_str(), evaluated, report.stop_reason.c_str(),
          report.budget.stopped.empty() ? "" : "; budget: ", report.budget.stopped.c_str(),
          report.reason.empty() ? (report.confirmed ? "confirmed" : "-") : report.reason.c_str());
      const auto print_pairing = [&](const tunekit::PairedFinal& p, const char* rival) {
        std::fprintf(stderr,
                     "  shape %zu: paired %s with the %s %s: %d pairs, ratio %.3f "
                     "(95 %% bound %.3f), %s: %s\n",
                     s + 1, p.candidate.c_str(), rival, p.rival.c_str(), p.pairs, p.ratio,
                     p.ratio_high, p.kept_candidate ? "kept" : "the rival stands", p.why.c_str());
      };
      if (const FinalRace& f = report.final_race; f.finalists > 0)
        std::fprintf(stderr,
                     "  shape %zu: final race: %zu finalists, %.2f s; the search's pick %s\n",
                     s + 1, f.finalists, f.seconds, f.search_pick.c_str());
      else
        std::fprintf(stderr, "  shape %zu: no final race: %s\n", s + 1, f.note.c_str());
      if (const auto& p = report.tie_pairing) print_pairing(*p, "tied rival");
      if (const auto& p = report.anchor_pairing) print_pairing(*p, "anchor");
    }

    if (pause > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    // Five interleaved rounds over the three, best median each. Only readings of these
    // rounds count: a reading taken before the tune ran would favour the points the survey
    // timed over the pick. OpenBLAS goes last in a round, and measure() settles the device
    // first: its threads spin for about 0.1 s after a call (OPENBLAS_THREAD_TIMEOUT) and take a
    // core from whatever runs next — up to 2x on a 2-thread kernel of 1 ms.
    std::vector<std::size_t> finalists{best_own};
    if (tuner && pick != best_own && pick != best_blas) finalists.push_back(pick);
    finalists.push_back(best_blas);
    std::map<std::size_t, double> best_seconds;
    std::set<std::size_t> valid;
    for (std::size_t i : finalists) {  // validates the pick (once) where the survey did not
      best_seconds[i] = 1e300;
      if (survey.time(i) < 1e300) valid.insert(i);
    }
    for (int round = 0; round < 5; ++round) {
      for (std::size_t i : finalists) {
        if (!valid.count(i)) continue;  // failed validation or timing
        const double m = survey.measure(i);
        if (log_rounds)
          std::fprintf(stderr, "  round %d %s: %.4g ms\n", round,
                       short_name(op.candidate(i).config).c_str(), m * 1e3);
        best_seconds[i] = std::min(best_seconds[i], m);
      }
    }
    if (tuner) {
      // What the tuner saw against what the survey saw: a search that touched the survey's
      // best and ranked it lower is a measurement disagreement, one that never touched it a
      // search one.
      const CandidateReport* seen = tuner_report.find(best_own);
      std::fprintf(stderr,
                   "  shape %zu: tuner's pick %.3g s (survey %.3g s); survey's best own %s: %s\n",
                   s + 1, tuner_report.winner_score, best_seconds[pick],
                   short_name(op.candidate(best_own).config).c_str(),
                   seen && seen->outcome.ok()
                       ? ("tuner measured " + std::to_string(seen->score) + " s").c_str()
                       : (seen ? "touched, not ranked" : "not touched by the tuner"));
    }
    // A pick the survey did not reach counts as an own kernel when it is one.
    if (tuner && is_own(pick) && best_seconds[pick] < best_seconds[best_own]) best_own = pick;
    auto gflops = [&](std::size_t i) { return flops / best_seconds.at(i) / 1e9; };
    const double blas_rate = gflops(best_blas), own_rate = gflops(best_own);
    const double best_rate = std::max(blas_rate, own_rate);
    const double pick_rate = tuner ? gflops(pick) : 0;
    const bool goal = tuner && pick_rate >= 0.98 * best_rate;
    met += goal;
    ++shapes;
    std::printf(
        "| %zu | %lld×%lld×%lld | %s | %.1f (%s) | %.1f (%s) | %s | %.1f | %.2f | %.1f | "
        "%zu | %s | %.1f–%.1f |\n",
        s + 1, static_cast<long long>(shape.m), static_cast<long long>(shape.n),
        static_cast<long long>(shape.k), shape.kind, blas_rate,
        short_name(op.candidate(best_blas).config).c_str(), own_rate,
        short_name(op.candidate(best_own).config).c_str(), pick_name.c_str(), pick_rate,
        tuner ? pick_rate / best_rate : 0.0, tune_seconds, evaluated,
        tuner ? (goal ? "met" : "missed") : "-", load_before, load_average());
    std::fflush(stdout);
  }
  if (tuner && !row_only)
    std::printf("\ngoal (pick >= 0.98x best) met on %d of %d shapes\n", met, shapes);
  return 0;
}
