// Strategy benchmark on the recorded GPU spaces (data/): for every strategy on
// every dataset, seeded repeats of a replayed search; reports the autotuning-methodology score
// (0 = expected random search, 1 = optimum, averaged up to the 0.96-cutoff budget B) and the
// fraction of optimum (optimum / best found) at 25, 50, 100, 200 and 400 evaluations.
//
//   strategy_bench [--datasets DIR] [--repeats N] [--max-evals N] [--strategies a,b,...]
//                  [--only kernel/device,...] [--threads N] [--peer [LABEL=]DIR]... [--traces DIR]
//                  [--default none|first] [--svg FILE] [--check-exhaustive]
//
// Every run's evaluation budget is B, the dataset's cutoff budget, and the strategy is told it
// (SearchPrior::budget_evaluations); --max-evals N makes it max(N, B), for the fraction columns.
// --peer [LABEL=]DIR scores other tuners' traces with the same scorer: DIR/<kernel>__<device>__
// <name>.trace, one line per seeded run, "seed<TAB>v1 v2 ...": the objective of each
// configuration in the order the tuner first evaluated it, inf where it failed (bench/peer/
// kernel_tuner_strategies.py writes Kernel Tuner's). They appear as "LABEL:<name>" rows (LABEL
// defaults to kt); --peer may be repeated, and --strategies none scores traces only.
// --traces DIR writes tunekit's runs in that format. --default first evaluates the first valid
// recorded configuration before the strategy (as the tuner evaluates an op's default), counted
// as the first evaluation of the trace.
//
// --check-exhaustive also replays every file exhaustively and fails unless the best found is
// exactly the file's minimum (the CI smoke test runs it with few repeats).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/methodology.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/strategy.hpp"

namespace {

using namespace tunekit;

struct Options {
  std::filesystem::path datasets = TUNEKIT_DATASETS_DIR;
  std::size_t repeats = 100;
  std::size_t max_evals = 0;  // 0: every run's budget is the cutoff budget B
  std::vector<std::string> strategies = {"random", "anneal", "genetic",  "ils",
                                         "bayes",  "bandit", "surrogate"};
  std::vector<std::string> only;  // "convolution_milo/A100", ...; empty: every dataset
  std::size_t threads = 2;
  std::string svg;
  std::vector<std::pair<std::string, std::filesystem::path>> peers;  // label, directory
  std::filesystem::path traces;
  bool first_default = false;
  bool check_exhaustive = false;
};

const std::size_t kMarks[] = {25, 50, 100, 200, 400};

const StrategyRegistry& registry() {
  static const StrategyRegistry r = StrategyRegistry::builtin();
  return r;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// "a,b:k=1,j=2,c": strategies separated by commas; an item without ':' that holds '=' is one
// more option of the spec before it.
std::vector<std::string> split_specs(const std::string& s) {
  std::vector<std::string> out;
  for (const std::string& item : split(s, ',')) {
    if (!out.empty() && item.find(':') == std::string::npos && item.find('=') != std::string::npos)
      out.back() += "," + item;
    else
      out.push_back(item);
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--datasets")
      o.datasets = next();
    else if (a == "--repeats")
      o.repeats = std::max<std::size_t>(1, std::stoul(next()));
    else if (a == "--max-evals")
      o.max_evals = std::stoul(next());
    else if (a == "--strategies") {
      o.strategies = split_specs(next());
      if (o.strategies == std::vector<std::string>{"none"}) o.strategies.clear();
    } else if (a == "--only")
      o.only = split(next(), ',');
    else if (a == "--threads")
      o.threads = std::max<std::size_t>(1, std::stoul(next()));
    else if (a == "--svg")
      o.svg = next();
    else if (a == "--peer") {
      const std::string v = next();
      const std::size_t eq = v.find('=');
      if (eq == std::string::npos)
        o.peers.emplace_back("kt", v);
      else
        o.peers.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--traces")
      o.traces = next();
    else if (a == "--default") {
      const std::string v = next();
      if (v != "none" && v != "first") throw UsageError("--default takes none or first");
      o.first_default = v == "first";
    } else if (a == "--check-exhaustive")
      o.check_exhaustive = true;
    else
      throw UsageError("unknown option " + a +
                       " (see the comment at the top of strategy_bench.cpp)");
  }
  return o;
}

struct Cell {
  double score = 0;         // mean methodology score over the runs
  double stderr_score = 0;  // its standard error
  double min_score = 0;     // the worst run
  std::size_t runs = 0;
  std::vector<double> fraction_curve;  // mean optimum / best after k evaluations
};

// The one scorer, for tunekit's runs and peers' traces alike: a trace of objectives (inf where
// the configuration failed) as a History, then best_so_far and methodology_score.
double score_trace(const std::vector<double>& trace, const MethodologyBaseline& base,
                   std::size_t budget, std::vector<double>* fraction) {
  History h(trace.size());
  for (std::size_t k = 0; k < trace.size(); ++k) {
    Evaluation e;
    e.index = k;
    e.status = std::isfinite(trace[k]) ? Status::ok : Status::launch_failed;
    e.value = trace[k];
    h.add(e);
  }
  const std::vector<double> curve = best_so_far(h, budget, base.worst);
  if (fraction) {
    fraction->resize(budget);
    for (std::size_t k = 0; k < budget; ++k) (*fraction)[k] = base.optimum / curve[k];
  }
  return methodology_score(curve, base);
}

Cell summarise(const std::vector<double>& scores, const std::vector<std::vector<double>>& curves,
               std::size_t budget) {
  Cell c;
  c.runs = scores.size();
  const double n = static_cast<double>(scores.size());
  for (double s : scores) c.score += s / n;
  double var = 0;
  for (double s : scores) var += (s - c.score) * (s - c.score);
  c.stderr_score = scores.size() > 1 ? std::sqrt(var / (n - 1) / n) : 0.0;
  c.min_score = scores.empty() ? 0 : *std::min_element(scores.begin(), scores.end());
  c.fraction_curve.assign(budget, 0);
  for (const auto& curve : curves)
    for (std::size_t k = 0; k < budget && k < curve.size(); ++k)
      c.fraction_curve[k] += curve[k] / n;
  return c;
}

// Replays a recording as the tuner's evaluator would: each point is its recorded result, its
// recorded compile + benchmark + verification time is charged to the clock.
class ReplayEvaluator final : public Evaluator {
 public:
  ReplayEvaluator(const Recording& rec, std::uint64_t seed) : backend_(rec, seed) {}
  std::vector<PointResult> evaluate(std::span<const std::size_t> batch) override {
    std::vector<PointResult> out;
    for (std::size_t i : batch) {
      const ReplayMeasurement m = backend_.measure(i);
      out.push_back({i, m.status, m.ok() ? m.recorded_ms : INFINITY});
    }
    return out;
  }
  double elapsed_seconds() const override { return backend_.clock_ms() / 1000.0; }

 private:
  ReplayBackend backend_;
};

std::optional<std::size_t> first_valid(const Recording& rec) {
  for (std::size_t i = 0; i < rec.size(); ++i)
    if (rec.result(i).status == Status::ok) return i;
  return std::nullopt;
}

std::vector<double> trace_of(const History& h) {
  std::vector<double> t;
  for (const Evaluation& e : h.evaluations()) t.push_back(e.ok() ? e.value : INFINITY);
  return t;
}

std::string trace_line(std::uint64_t seed, const std::vector<double>& trace) {
  std::string line = std::to_string(seed) + "\t";
  char buffer[32];
  for (std::size_t k = 0; k < trace.size(); ++k) {
    if (std::isfinite(trace[k]))
      std::snprintf(buffer, sizeof buffer, "%.17g", trace[k]);
    else
      std::snprintf(buffer, sizeof buffer, "inf");
    line += (k ? " " : "") + std::string(buffer);
  }
  return line;
}

Cell run_cell(const Recording& rec, const MethodologyBaseline& base, const std::string& strategy,
              std::size_t budget, const Options& o, std::vector<std::string>* lines) {
  std::vector<double> scores(o.repeats, 0);
  std::vector<std::vector<double>> curves(o.repeats);
  std::vector<std::string> out(o.repeats);
  const std::optional<std::size_t> first = o.first_default ? first_valid(rec) : std::nullopt;
  auto work = [&](std::size_t from) {
    for (std::size_t r = from; r < o.repeats; r += o.threads) {
      const std::uint64_t seed = 1000 + r;
      ReplayEvaluator evaluator(rec, seed);
      std::unique_ptr<Strategy> s = registry().make(strategy);
      SearchSettings settings;
      settings.seed = seed;
      // The default counts as the trace's first evaluation: the strategy gets the rest.
      settings.budget.evaluations = first ? budget - 1 : budget;
      settings.prior.default_index = first;
      if (first) settings.first = {*first};
      const SearchResult result = search(rec.space(), *s, evaluator, settings);
      const std::vector<double> trace = trace_of(result.history);
      scores[r] = score_trace(trace, base, budget, &curves[r]);
      if (lines) out[r] = trace_line(seed, trace);
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < o.threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
  if (lines) *lines = std::move(out);
  return summarise(scores, curves, budget);
}

// Peers' traces for one dataset: name -> one trace per seed.
std::map<std::string, std::vector<std::vector<double>>> read_peer(const std::filesystem::path& dir,
                                                                  const std::string& stem) {
  std::map<std::string, std::vector<std::vector<double>>> out;
  if (dir.empty() || !std::filesystem::is_directory(dir)) return out;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    const std::string file = f.path().filename().string();
    if (!file.starts_with(stem + "__") || !file.ends_with(".trace")) continue;
    const std::string name = file.substr(stem.size() + 2, file.size() - stem.size() - 8);
    std::ifstream in(f.path());
    for (std::string line; std::getline(in, line);) {
      const std::size_t tab = line.find('\t');
      if (tab == std::string::npos) continue;
      std::vector<double> trace;
      std::stringstream values(line.substr(tab + 1));
      for (std::string v; values >> v;) trace.push_back(v == "inf" ? INFINITY : std::stod(v));
      out[name].push_back(std::move(trace));
    }
  }
  return out;
}

void write_svg(const std::string& file, const std::vector<std::string>& strategies,
               const std::map<std::string, std::vector<double>>& curves, std::size_t max_evals) {
  const double w = 720, h = 420, left = 60, right = 150, top = 20, bottom = 50;
  const double pw = w - left - right, ph = h - top - bottom;
  double ymin = 1.0;
  for (const auto& [name, c] : curves)
    for (double v : c) ymin = std::min(ymin, v);
  ymin = std::floor(ymin * 10) / 10;
  auto x = [&](double k) {
    return left + pw * std::log(k) / std::log(static_cast<double>(max_evals));
  };
  auto y = [&](double v) { return top + ph * (1.0 - (v - ymin) / (1.0 - ymin)); };
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                           "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  std::ofstream out(file);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
         "fill=\"white\"/>\n";
  for (double v = ymin; v <= 1.0001; v += 0.1) {
    out << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << y(v) << "\" y2=\""
        << y(v) << "\" stroke=\"#ddd\"/><text x=\"" << left - 8 << "\" y=\"" << y(v) + 4
        << "\" text-anchor=\"end\">" << std::round(v * 10) / 10 << "</text>\n";
  }
  for (std::size_t k : {1, 10, 25, 50, 100, 200, 400}) {
    if (k > max_evals) continue;
    out << "<line x1=\"" << x(static_cast<double>(k)) << "\" x2=\"" << x(static_cast<double>(k))
        << "\" y1=\"" << top << "\" y2=\"" << top + ph << "\" stroke=\"#eee\"/><text x=\""
        << x(static_cast<double>(k)) << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\">"
        << k << "</text>\n";
  }
  out << "<text x=\"" << left + pw / 2 << "\" y=\"" << h - 10
      << "\" text-anchor=\"middle\">evaluations (log scale)</text>\n<text transform=\"translate(15,"
      << top + ph / 2
      << ") rotate(-90)\" text-anchor=\"middle\">fraction of optimum (mean)</text>\n";
  for (std::size_t s = 0; s < strategies.size(); ++s) {
    const std::vector<double>& c = curves.at(strategies[s]);
    out << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << colours[s % 8]
        << "\" points=\"";
    for (std::size_t k = 0; k < std::min(c.size(), max_evals); ++k)
      out << x(static_cast<double>(k + 1)) << ',' << y(c[k]) << ' ';
    out << "\"/>\n<text x=\"" << left + pw + 10 << "\" y=\""
        << top + 20 + 18 * static_cast<double>(s) << "\" fill=\"" << colours[s % 8] << "\">"
        << strategies[s] << "</text>\n";
  }
  out << "</svg>\n";
}

int run(const Options& o) {
  std::vector<std::filesystem::path> files;
  for (const auto& dir : std::filesystem::directory_iterator(o.datasets)) {
    if (!dir.is_directory() || dir.path().filename() == "spaces") continue;
    for (const auto& f : std::filesystem::directory_iterator(dir.path()))
      if (f.path().string().ends_with(".json.gz") || f.path().string().ends_with(".json"))
        files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  auto stem_of = [](const std::filesystem::path& file) {
    std::string name = file.filename().string();
    name = name.substr(0, name.find(".json"));
    return file.parent_path().filename().string() + "/" + name;
  };
  if (!o.only.empty())
    std::erase_if(files, [&](const std::filesystem::path& f) {
      return std::find(o.only.begin(), o.only.end(), stem_of(f)) == o.only.end();
    });
  if (files.empty()) {
    std::cerr << "strategy_bench: no recorded spaces under " << o.datasets << '\n';
    return 1;
  }
  if (!o.traces.empty()) std::filesystem::create_directories(o.traces);
  if (o.strategies.empty())
    std::printf("strategy_bench: scoring traces only, budget %s\n",
                o.max_evals ? ("max(B, " + std::to_string(o.max_evals) + ")").c_str() : "B");
  else
    std::printf("strategy_bench: %zu repeats (seeds 1000..%zu), budget %s, default %s\n", o.repeats,
                999 + o.repeats,
                o.max_evals ? ("max(B, " + std::to_string(o.max_evals) + ")").c_str() : "B",
                o.first_default ? "first valid configuration, evaluated first" : "none");
  std::vector<std::string> names;  // strategies, then peers, in order of appearance
  std::map<std::string, std::vector<double>> scores;  // per dataset
  std::map<std::string, std::map<std::string, double>> by_dataset;
  std::vector<std::string> dataset_names;
  std::map<std::string, std::vector<double>> curve_sum;
  std::map<std::string, std::vector<double>> conv_at;
  int failures = 0;
  for (const std::filesystem::path& file : files) {
    const Recording rec = Recording::load(file);
    std::vector<double> values(rec.size());
    for (std::size_t i = 0; i < rec.size(); ++i)
      values[i] = rec.result(i).status == Status::ok ? rec.result(i).time_ms : INFINITY;
    const MethodologyBaseline base = methodology_baseline(values, o.max_evals);
    const std::string name = stem_of(file);
    const std::size_t budget = std::min(rec.size(), std::max(o.max_evals, base.cutoff_budget));
    if (o.check_exhaustive) {
      ReplayBackend backend(rec, 1);
      std::unique_ptr<Strategy> s = StrategyRegistry::builtin().make("exhaustive");
      const SearchResult r = search(
          rec.space(), *s,
          [&](std::size_t i) {
            const ReplayMeasurement m = backend.measure(i);
            return ObjectiveResult{m.status, m.recorded_ms, m.charged_ms / 1000.0, m.message};
          },
          Budget{}, 1);
      const bool exact = r.history.best() && r.history.best()->value == rec.optimum_ms() &&
                         r.history.size() == rec.size();
      std::printf("exhaustive %s: %zu evaluations, best %.6g ms, file minimum %.6g ms: %s\n",
                  name.c_str(), r.history.size(), r.history.best() ? r.history.best()->value : 0.0,
                  rec.optimum_ms(), exact ? "exact" : "MISMATCH");
      failures += exact ? 0 : 1;
    }
    std::string peer_stem = name;
    peer_stem.replace(peer_stem.find('/'), 1, "__");
    std::vector<std::pair<std::string, Cell>> cells;
    for (const std::string& strategy : o.strategies) {
      std::vector<std::string> lines;
      cells.emplace_back(
          strategy, run_cell(rec, base, strategy, budget, o, o.traces.empty() ? nullptr : &lines));
      if (!o.traces.empty()) {
        std::string file_name = peer_stem + "__" + strategy + ".trace";
        std::replace(file_name.begin(), file_name.end(), ':', '-');
        std::ofstream out(o.traces / file_name);
        for (const std::string& line : lines) out << line << '\n';
      }
    }
    for (const auto& [label, dir] : o.peers)
      for (const auto& [peer, traces] : read_peer(dir, peer_stem)) {
        std::vector<double> s;
        std::vector<std::vector<double>> curves(traces.size());
        for (std::size_t r = 0; r < traces.size(); ++r)
          s.push_back(score_trace(traces[r], base, budget, &curves[r]));
        cells.emplace_back(label + ":" + peer, summarise(s, curves, budget));
      }
    dataset_names.push_back(name);
    std::printf(
        "\n### %s (B = %zu of %zu configurations)\n\n| strategy | score | ± se | worst run | runs "
        "| @25 | @50 | @100 | @200 | @400 |\n|---|---|---|---|---|---|---|---|---|---|\n",
        name.c_str(), base.cutoff_budget, rec.size());
    for (const auto& [strategy, c] : cells) {
      std::printf("| %s | %.3f | %.3f | %.3f | %zu", strategy.c_str(), c.score, c.stderr_score,
                  c.min_score, c.runs);
      for (std::size_t m : kMarks) {
        if (m <= c.fraction_curve.size())
          std::printf(" | %.3f", c.fraction_curve[m - 1]);
        else
          std::printf(" | -");
      }
      std::printf(" |\n");
      std::fflush(stdout);
      if (std::find(names.begin(), names.end(), strategy) == names.end()) names.push_back(strategy);
      scores[strategy].push_back(c.score);
      by_dataset[strategy][name] = c.score;
      // The mean curve over datasets, as far as every dataset's runs reach.
      auto& sum = curve_sum[strategy];
      if (sum.empty()) sum.assign(c.fraction_curve.size(), 0);
      sum.resize(std::min(sum.size(), c.fraction_curve.size()));
      for (std::size_t k = 0; k < sum.size(); ++k)
        sum[k] += c.fraction_curve[k] / static_cast<double>(files.size());
      if (name.starts_with("convolution_milo/") && c.fraction_curve.size() >= 200)
        conv_at[strategy].push_back(c.fraction_curve[199]);
    }
  }
  std::printf("\n### Summary\n\n| strategy | mean score | lowest dataset | datasets");
  for (const std::string& d : dataset_names) std::printf(" | %s", d.c_str());
  std::printf(" | mean fraction @200 on convolution_milo |\n|---|---|---|---");
  for (std::size_t k = 0; k <= dataset_names.size(); ++k) std::printf("|---");
  std::printf("|\n");
  for (const std::string& s : names) {
    const std::vector<double>& v = scores[s];
    double mean = 0;
    for (double x : v) mean += x / static_cast<double>(v.size());
    double conv = 0;
    for (double x : conv_at[s]) conv += x / static_cast<double>(conv_at[s].size());
    std::printf("| %s | %.3f | %.3f | %zu", s.c_str(), mean, *std::min_element(v.begin(), v.end()),
                v.size());
    for (const std::string& d : dataset_names) {
      const auto it = by_dataset[s].find(d);
      if (it == by_dataset[s].end())
        std::printf(" | -");
      else
        std::printf(" | %.3f", it->second);
    }
    std::printf(" | %s |\n", conv_at[s].empty() ? "-" : std::to_string(conv).substr(0, 5).c_str());
  }
  if (!o.svg.empty()) {  // as far as every dataset's runs reach, at most 400 evaluations
    std::size_t width = 400;
    for (const std::string& st : o.strategies) width = std::min(width, curve_sum[st].size());
    write_svg(o.svg, o.strategies, curve_sum, std::max<std::size_t>(2, width));
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "strategy_bench: " << e.what() << '\n';
    return 2;
  }
}
