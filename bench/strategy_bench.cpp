// Strategy benchmark on the recorded GPU spaces (data/): for every strategy on
// every dataset, seeded repeats of a replayed search; reports the autotuning-methodology score
// (0 = expected random search, 1 = optimum, averaged up to the 0.96-cutoff budget) and the
// fraction of optimum (optimum / best found) at 25, 50, 100, 200 and 400 evaluations.
//
//   strategy_bench [--datasets DIR] [--repeats N] [--max-evals N] [--strategies a,b,...]
//                  [--threads N] [--svg FILE] [--check-exhaustive]
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
  std::size_t max_evals = 400;
  std::vector<std::string> strategies = {"random", "anneal", "genetic", "ils", "bayes", "bandit"};
  std::size_t threads = 2;
  std::string svg;
  bool check_exhaustive = false;
};

const std::size_t kMarks[] = {25, 50, 100, 200, 400};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
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
      o.repeats = std::stoul(next());
    else if (a == "--max-evals")
      o.max_evals = std::stoul(next());
    else if (a == "--strategies")
      o.strategies = split(next(), ',');
    else if (a == "--threads")
      o.threads = std::max<std::size_t>(1, std::stoul(next()));
    else if (a == "--svg")
      o.svg = next();
    else if (a == "--check-exhaustive")
      o.check_exhaustive = true;
    else
      throw UsageError("unknown option " + a +
                       " (see the comment at the top of strategy_bench.cpp)");
  }
  return o;
}

struct Cell {
  double score = 0;                    // mean methodology score
  std::vector<double> fraction_curve;  // mean optimum / best after k evaluations
};

Cell run_cell(const Recording& rec, const MethodologyBaseline& base, const std::string& strategy,
              const Options& o) {
  const std::size_t budget = std::min(rec.size(), std::max(o.max_evals, base.cutoff_budget));
  std::vector<double> scores(o.repeats, 0);
  std::vector<std::vector<double>> curves(o.repeats);
  auto work = [&](std::size_t first) {
    for (std::size_t r = first; r < o.repeats; r += o.threads) {
      ReplayBackend backend(rec, 1000 + r);
      std::unique_ptr<Strategy> s = StrategyRegistry::builtin().make(strategy);
      const SearchResult result = search(
          rec.space(), *s,
          [&](std::size_t i) {
            const ReplayMeasurement m = backend.measure(i);
            return ObjectiveResult{m.status, m.recorded_ms, m.charged_ms / 1000.0, m.message};
          },
          Budget{budget, {}}, 1000 + r);
      const std::vector<double> curve = best_so_far(result.history, budget, base.worst);
      scores[r] = methodology_score(curve, base);
      curves[r].resize(budget);
      for (std::size_t k = 0; k < budget; ++k) curves[r][k] = base.optimum / curve[k];
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < o.threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
  Cell c;
  for (double s : scores) c.score += s / static_cast<double>(o.repeats);
  c.fraction_curve.assign(budget, 0);
  for (const auto& curve : curves)
    for (std::size_t k = 0; k < budget; ++k)
      c.fraction_curve[k] += curve[k] / static_cast<double>(o.repeats);
  return c;
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
    for (std::size_t k = 0; k < c.size(); ++k)
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
  if (files.empty()) {
    std::cerr << "strategy_bench: no recorded spaces under " << o.datasets << '\n';
    return 1;
  }
  std::printf("strategy_bench: %zu repeats, up to %zu evaluations, seeds 1000..%zu\n\n", o.repeats,
              o.max_evals, 999 + o.repeats);
  std::printf(
      "| dataset | strategy | score | @25 | @50 | @100 | @200 | @400 "
      "|\n|---|---|---|---|---|---|---|---|\n");
  std::map<std::string, double> score_sum;
  std::map<std::string, std::vector<double>> curve_sum;
  std::map<std::string, std::vector<double>> conv_at;
  int failures = 0;
  for (const std::filesystem::path& file : files) {
    const Recording rec = Recording::load(file);
    std::vector<double> values(rec.size());
    for (std::size_t i = 0; i < rec.size(); ++i)
      values[i] = rec.result(i).status == Status::ok ? rec.result(i).time_ms : INFINITY;
    const MethodologyBaseline base = methodology_baseline(values, o.max_evals);
    const std::string name =
        file.parent_path().filename().string() + "/" + file.filename().string();
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
    for (const std::string& strategy : o.strategies) {
      const Cell c = run_cell(rec, base, strategy, o);
      std::printf("| %s (budget %zu) | %s | %.3f", name.c_str(), base.cutoff_budget,
                  strategy.c_str(), c.score);
      for (std::size_t m : kMarks) {
        if (m <= c.fraction_curve.size())
          std::printf(" | %.3f", c.fraction_curve[m - 1]);
        else
          std::printf(" | -");
      }
      std::printf(" |\n");
      std::fflush(stdout);
      score_sum[strategy] += c.score / static_cast<double>(files.size());
      auto& sum = curve_sum[strategy];
      sum.resize(std::min(o.max_evals, c.fraction_curve.size()), 0);
      for (std::size_t k = 0; k < sum.size(); ++k)
        sum[k] += c.fraction_curve[k] / static_cast<double>(files.size());
      if (name.starts_with("convolution_milo/")) {
        auto& conv = conv_at[strategy];
        if (c.fraction_curve.size() >= 200) conv.push_back(c.fraction_curve[199]);
      }
    }
  }
  std::printf(
      "\n| strategy | mean score over datasets | mean fraction @200 on convolution_milo "
      "|\n|---|---|---|\n");
  for (const std::string& s : o.strategies) {
    double conv = 0;
    for (double v : conv_at[s])
      conv += v / static_cast<double>(std::max<std::size_t>(1, conv_at[s].size()));
    std::printf("| %s | %.3f | %s |\n", s.c_str(), score_sum[s],
                conv_at[s].empty() ? "-" : std::to_string(conv).substr(0, 5).c_str());
  }
  if (!o.svg.empty()) write_svg(o.svg, o.strategies, curve_sum, o.max_evals);
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
