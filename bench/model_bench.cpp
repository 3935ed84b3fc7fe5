// model_bench: how well the cost model ranks the built-in CPU ops' candidates on this machine
// (docs/cost-model.md). For every op and shape, an exhaustive tunekit search measures every
// admitted candidate (full windows: the hopeless cut is off, no paired confirmation); then
//   - Spearman's rank correlation between the model's scores (ranking_seconds; equal scores
//     share their average rank) and the measured medians, over candidates that are scored and
//     measured cleanly;
//   - the measured speedup of model_default's pick over the untuned default, and of the
//     measured best over the default (what a full search reaches);
// and per op the geometric mean of the speedups over its shapes.
//
//   model_bench [--profile FILE] [--threads N] [--quick] [--ops sgemm,softmax,...]
//
// Without --profile the device's envelope is calibrated first (the full calibration).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tunekit/calibration.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/tuner.hpp"

namespace {

struct Shape {
  std::string op;
  std::string key;
};

// Average ranks (ties share the mean of their positions).
std::vector<double> ranks(const std::vector<double>& xs) {
  std::vector<std::size_t> order(xs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return xs[a] < xs[b]; });
  std::vector<double> r(xs.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && xs[order[j + 1]] == xs[order[i]]) ++j;
    const double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean;
    i = j + 1;
  }
  return r;
}

// Spearman's rho: Pearson's correlation of the average ranks. NaN under three points.
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 3) return std::nan("");
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma += ra[i] / n;
    mb += rb[i] / n;
  }
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : std::nan("");
}

}  // namespace

int main(int argc, char** argv) {
  std::string profile;
  std::string only;
  int threads = 0;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--profile" && i + 1 < argc) {
      profile = argv[++i];
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--ops" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: model_bench [--profile FILE] [--threads N] [--quick] [--ops a,b]\n");
      return 2;
    }
  }
  tunekit::cpu::ThreadPool pool(threads);
  tunekit::cpu::CpuDevice device;
  tunekit::Envelope envelope;
  if (profile.empty()) {
    auto probe = tunekit::cpu::make_calibration_probe(pool);
    const tunekit::Calibration c = tunekit::calibrate(*probe, {});
    envelope = c.envelope;
    std::printf("calibrated in %.1f s\n", c.seconds);
  } else {
    envelope = tunekit::read_profile(profile).envelope;
  }
  std::printf(
      "envelope: peak %.1f / %.1f GFLOP/s (1 / %d threads), DRAM %.1f / %.1f GB/s, cache %.1f "
      "GB/s, %.1f MiB, dispatch %.1f us, %d chains\n\n",
      envelope.peak_flops_1.value / 1e9, envelope.peak_flops_all.value / 1e9, envelope.threads,
      envelope.dram_bw_1.value / 1e9, envelope.dram_bw_all.value / 1e9,
      envelope.cache_bw_1.value / 1e9, envelope.cache_bytes.value / (1024.0 * 1024),
      envelope.launch_seconds.value * 1e6, envelope.fma_chains);

  std::vector<Shape> shapes = {
      {"sgemm", "m=128,n=128,k=128"},
      {"sgemm", "m=256,n=256,k=256"},
      {"sgemm", "m=512,n=512,k=512"},
      {"sgemm", "m=1024,n=256,k=512"},
      {"softmax", "rows=256,cols=1024"},
      {"softmax", "rows=2048,cols=4096"},
      {"rmsnorm", "rows=256,cols=1024"},
      {"rmsnorm", "rows=2048,cols=4096"},
      {"sum", "n=100000"},
      {"sum", "n=16000000"},
  };
  if (quick) {
    shapes = {{"sgemm", "m=128,n=128,k=128"},
              {"sgemm", "m=256,n=256,k=256"},
              {"softmax", "rows=256,cols=1024"},
              {"rmsnorm", "rows=256,cols=1024"},
              {"sum", "n=100000"}};
  }

  std::printf(
      "| op | shape | n | Spearman | default | model pick | model pick speedup | "
      "best measured | best speedup |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  std::map<std::string, std::vector<double>> model_speedups, best_speedups, rhos;
  for (const Shape& s : shapes) {
    if (!only.empty() && ("," + only + ",").find("," + s.op + ",") == std::string::npos) continue;
    const auto op = tunekit::find_builtin_op(s.op).make(pool);
    const tunekit::Key key = op->parse_shape(s.key);
    tunekit::TunerOptions options;
    options.model.envelope = envelope;
    options.decide.confirm_pairs = 0;
    options.measure.timing.hopeless_ratio = 1e12;  // every candidate gets its full window
    tunekit::Tuner tuner(device, options);
    tunekit::ModelReport model;
    tuner.model_default(*op, key, &model);
    const tunekit::TuneReport measured = tuner.tune(*op, key);

    std::vector<double> predicted, observed;
    // The report lists candidates in evaluation order: look each up by index.
    auto score_of = [&](std::size_t index) {
      const tunekit::CandidateReport* c = measured.find(index);
      return c && c->outcome.ok() ? c->score : 0.0;
    };
    for (const auto& m : model.candidates) {
      const tunekit::CandidateReport* c = measured.find(m.index);
      if (!m.scored || !m.admission.ok() || !c || !c->outcome.ok()) continue;
      // The scores themselves: genuine ties share their average rank (ranks()), rather than
      // being broken by the decision order (memory time, then declaration order).
      predicted.push_back(m.time.seconds);
      observed.push_back(c->score);
    }
    const double rho = spearman(predicted, observed);
    const double def = score_of(measured.default_index);
    const double pick = score_of(model.winner);
    const double best = score_of(measured.winner);
    const double model_speedup = def > 0 && pick > 0 ? def / pick : std::nan("");
    const double best_speedup = def > 0 && best > 0 ? def / best : std::nan("");
    std::printf("| %s | %s | %zu | %.2f | %s %.3g ms | %s %.3g ms | %.2fx | %s %.3g ms | %.2fx |\n",
                s.op.c_str(), s.key.c_str(), predicted.size(), rho, measured.default_name.c_str(),
                def * 1e3, model.winner_name.c_str(), pick * 1e3, model_speedup,
                measured.winner_name.c_str(), best * 1e3, best_speedup);
    std::fflush(stdout);
    if (std::isfinite(model_speedup)) model_speedups[s.op].push_back(model_speedup);
    if (std::isfinite(best_speedup)) best_speedups[s.op].push_back(best_speedup);
    if (std::isfinite(rho)) rhos[s.op].push_back(rho);
  }
  auto geomean = [](const std::vector<double>& xs) {
    double l = 0;
    for (double x : xs) l += std::log(x);
    return xs.empty() ? std::nan("") : std::exp(l / static_cast<double>(xs.size()));
  };
  std::printf(
      "\n| op | mean Spearman | model_default speedup (geo-mean) | best speedup (geo-mean) |\n");
  std::printf("|---|---|---|---|\n");
  std::vector<double> all_model, all_best;
  for (const auto& [op, xs] : model_speedups) {
    double mean_rho = 0;
    for (double r : rhos[op]) mean_rho += r / static_cast<double>(rhos[op].size());
    std::printf("| %s | %.2f | %.2fx | %.2fx |\n", op.c_str(), mean_rho, geomean(xs),
                geomean(best_speedups[op]));
    all_model.insert(all_model.end(), xs.begin(), xs.end());
    all_best.insert(all_best.end(), best_speedups[op].begin(), best_speedups[op].end());
  }
  std::printf("| all | | %.2fx | %.2fx |\n", geomean(all_model), geomean(all_best));
  return 0;
}
