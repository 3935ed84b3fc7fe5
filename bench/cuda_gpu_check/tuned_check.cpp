// (c) Tuned sgemm against the best cuBLAS anchor of the same search, and (d) tuned softmax and
// rmsnorm against the device's DRAM bandwidth. Each is one Tuner::tune with a wall-clock budget
// (strategy auto, memory store, trials in process): the numbers are the report's own readings,
// taken on the same clock in the same search, never a second measurement.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "backends/cuda/driver_api.hpp"
#include "cuda_gpu_check/gpu_check.hpp"
#include "tunekit/cuda_catalog.hpp"
#include "tunekit/tuner.hpp"

namespace gpu_check {

tunekit::TuneReport tune_op(Setup& setup, const tunekit::OpBase& op, const tunekit::Key& key,
                            double budget_seconds) {
  tunekit::TunerOptions options;
  options.decide.strategy = "auto";
  options.decide.budget_seconds = std::max(1.0, budget_seconds);
  options.persist.store = "none";
  options.measure.isolation.mode = tunekit::IsolationOptions::Mode::in_process;
  options.hooks.log = tunekit::Log(tunekit::make_stream_logger(std::cerr, tunekit::LogLevel::warn));
  std::cerr << fmt::format("cuda_gpu_check: tuning {} {} (budget {:.0f} s)\n", op.name(),
                           key.text(), options.decide.budget_seconds);
  tunekit::Tuner tuner(*setup.device, options);
  return tuner.tune(op, key);
}

BestOf best_of(const tunekit::TuneReport& report, const std::vector<std::size_t>& anchors) {
  BestOf best;
  for (const tunekit::CandidateReport& c : report.candidates) {
    if (!c.outcome.ok() || !(c.score > 0)) continue;
    const bool anchor = std::find(anchors.begin(), anchors.end(), c.index) != anchors.end();
    const tunekit::CandidateReport*& slot = anchor ? best.anchor : best.generated;
    if (!slot || c.score < slot->score) slot = &c;
  }
  return best;
}

namespace {

nlohmann::json search_json(const tunekit::TuneReport& r) {
  std::size_t measured = 0;
  for (const auto& c : r.candidates) measured += c.outcome.ok() ? 1 : 0;
  return {{"key", r.key},
          {"source", tunekit::to_string(r.source)},
          {"reason", r.reason},
          {"winner", r.winner_name},
          {"winner_seconds", r.winner_score},
          {"default", r.default_name},
          {"default_seconds", r.default_score},
          {"strategy", r.strategy},
          {"schedule", r.schedule},
          {"seed", r.seed},
          {"stop_reason", r.stop_reason},
          {"budget_seconds", r.budget.seconds},
          {"budget_cut", r.budget.cut},
          {"space_size", r.space_size},
          {"candidates_touched", r.candidates.size()},
          {"candidates_measured", measured},
          {"seconds_compiling", r.seconds_compiling},
          {"seconds_measuring", r.seconds_measuring},
          {"seconds_total", r.seconds_total}};
}

nlohmann::json candidate_json(const tunekit::CandidateReport* c, double flops) {
  if (!c) return nullptr;
  return {{"name", c->name},
          {"seconds", c->score},
          {"gflops", flops > 0 ? flops / c->score * 1e-9 : 0.0}};
}

struct SgemmShape {
  long long m, n, k;
  double box;
  double least;  // the least search budget that measures the default and the anchors
  double goal;   // generated / cuBLAS at least this; 0: reported only
};

std::string gflops(const tunekit::CandidateReport* c, double flops) {
  return c ? fixed(flops / c->score * 1e-9, 0) : "-";
}

// One shape: the search, its winner, its best generated kernel and its best cuBLAS anchor.
Verdict sgemm_shape(Setup& setup, const tunekit::OpBase& op, const SgemmShape& s, CheckResult& r) {
  const std::string shape = fmt::format("m={},n={},k={}", s.m, s.n, s.k);
  const tunekit::TuneReport report =
      tune_op(setup, op, op.parse_shape(shape), std::max(0.8 * s.box, s.least));
  const BestOf best = best_of(report, op.anchor_indices());
  const double flops =
      2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  const tunekit::CandidateReport* winner = report.find(report.winner);
  const double ratio =
      best.anchor && best.generated ? best.anchor->score / best.generated->score : 0.0;
  Verdict v = Verdict::info;
  if (s.goal > 0) v = ratio <= 0 ? Verdict::error : ratio >= s.goal ? Verdict::pass : Verdict::miss;
  r.rows.push_back({shape, winner ? winner->name : report.winner_name,
                    winner && winner->outcome.ok() ? gflops(winner, flops) : "-",
                    best.generated ? best.generated->name : "-", gflops(best.generated, flops),
                    best.anchor ? best.anchor->name : "-", gflops(best.anchor, flops),
                    percent(ratio), s.goal > 0 ? fmt::format(">= {:.0f} %", s.goal * 100) : "-",
                    std::string(to_string(v))});
  r.data["shapes"].push_back({{"shape", shape},
                              {"flops", flops},
                              {"search", search_json(report)},
                              {"winner", candidate_json(winner, flops)},
                              {"best_generated", candidate_json(best.generated, flops)},
                              {"best_cublas", candidate_json(best.anchor, flops)},
                              {"generated_vs_cublas", ratio},
                              {"goal", s.goal},
                              {"verdict", to_string(v)}});
  if (ratio <= 0)
    r.notes.push_back(fmt::format("{}: no {} measured cleanly ({})", shape,
                                  best.anchor ? "generated kernel" : "cuBLAS anchor",
                                  report.reason.empty() ? report.stop_reason : report.reason));
  return v;
}

// The worst of two verdicts, for a check made of parts: FAIL, ERROR, MISS, PASS, then INFO.
Verdict worse(Verdict a, Verdict b) {
  auto rank = [](Verdict v) {
    switch (v) {
      case Verdict::fail:
        return 4;
      case Verdict::error:
        return 3;
      case Verdict::miss:
        return 2;
      case Verdict::pass:
        return 1;
      default:
        return 0;
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

struct DramPeak {
  double bytes_per_second = 0;
  std::string source;
  nlohmann::json json = nlohmann::json::object();
};

// 2 x memory clock x bus width, from the driver's attributes (the formula of CUDA's samples);
// 0 when the driver does not report them.
double peak_from_attributes(const tunekit::cuda::DeviceInfo& info, nlohmann::json& json) {
  const tunekit::detail::LoadedDriver& driver = tunekit::detail::load_driver();
  if (!driver.api) return 0;
  CUdevice device = 0;
  int khz = 0, bits = 0;
  const auto& api = *driver.api;
  if (api.device_get(&device, static_cast<int>(info.index)) != CUDA_SUCCESS ||
      api.device_get_attribute(&khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, device) !=
          CUDA_SUCCESS ||
      api.device_get_attribute(&bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, device) !=
          CUDA_SUCCESS)
    return 0;
  json["memory_clock_khz"] = khz;
  json["bus_width_bits"] = bits;
  return khz > 0 && bits > 0 ? 2.0 * khz * 1e3 * bits / 8.0 : 0.0;
}

// The peak the goal is judged against: --dram-peak-gbs when given; else the larger (stricter)
// of the attributes' and the documented number for the product (H200: 4.8 TB/s).
DramPeak dram_peak(const Setup& setup) {
  DramPeak p;
  const tunekit::cuda::DeviceInfo& info = setup.context->info();
  const double attributes = peak_from_attributes(info, p.json);
  const double documented = info.identity.product.find("H200") != std::string::npos ? 4.8e12 : 0.0;
  p.json["from_attributes"] = attributes;
  p.json["documented"] = documented;
  if (setup.dram_peak > 0) {
    p.bytes_per_second = setup.dram_peak;
    p.source = "--dram-peak-gbs";
  } else if (attributes >= documented && attributes > 0) {
    p.bytes_per_second = attributes;
    p.source = "2 x memory clock x bus width (driver attributes)";
  } else if (documented > 0) {
    p.bytes_per_second = documented;
    p.source = "NVIDIA's documented 4.8 TB/s for the H200" +
               std::string(attributes > 0 ? " (above the attributes' number)"
                                          : " (the driver reports no memory clock or bus width)");
  }
  p.json["peak_bytes_per_second"] = p.bytes_per_second;
  p.json["source"] = p.source;
  return p;
}

Verdict bandwidth_op(Setup& setup, std::string_view name, double box, const DramPeak& peak,
                     CheckResult& r) {
  constexpr long long rows = 8192, cols = 8192;
  std::unique_ptr<tunekit::OpBase> op =
      tunekit::cuda::find_builtin_op(name).make(setup.context, *setup.pool);
  const tunekit::Key key = op->parse_shape(fmt::format("rows={},cols={}", rows, cols));
  const tunekit::TuneReport report = tune_op(setup, *op, key, std::max(0.8 * box, 6.0));
  const tunekit::CandidateReport* winner = report.find(report.winner);
  double bytes = 2.0 * rows * cols * sizeof(float);  // read once, written once
  std::string bytes_source = "2 x rows x cols x 4";
  if (std::optional<tunekit::Work> work = op->work(key, report.winner);
      work && work->compulsory_bytes > 0) {
    bytes = work->compulsory_bytes;
    bytes_source = "the op's work model (compulsory bytes)";
  }
  const bool measured = winner && winner->outcome.ok() && winner->score > 0;
  const double bandwidth = measured ? bytes / winner->score : 0.0;
  const double ratio = peak.bytes_per_second > 0 ? bandwidth / peak.bytes_per_second : 0.0;
  const Verdict v = !measured                    ? Verdict::error
                    : peak.bytes_per_second <= 0 ? Verdict::info
                    : ratio >= 0.8               ? Verdict::pass
                                                 : Verdict::miss;
  r.rows.push_back({std::string(name), fmt::format("rows={},cols={}", rows, cols),
                    winner ? winner->name : report.winner_name,
                    seconds_text(measured ? winner->score : 0), fixed(bandwidth * 1e-9, 0),
                    percent(ratio), std::string(to_string(v))});
  r.data["ops"].push_back({{"op", name},
                           {"search", search_json(report)},
                           {"bytes", bytes},
                           {"bytes_source", bytes_source},
                           {"bandwidth_bytes_per_second", bandwidth},
                           {"fraction_of_peak", ratio},
                           {"verdict", to_string(v)}});
  return v;
}

}  // namespace

CheckResult check_sgemm(Setup& setup, const TimeBoxes& boxes) {
  CheckResult r;
  r.columns = {"shape",       "winner",  "winner GFLOP/s",     "best generated", "GFLOP/s",
               "best cuBLAS", "GFLOP/s", "generated / cuBLAS", "goal",           "verdict"};
  r.data["shapes"] = nlohmann::json::array();
  const auto start = std::chrono::steady_clock::now();
  const SgemmShape shapes[] = {{4096, 4096, 4096, boxes.sgemm_large, 24, 0.9},
                               {1024, 1024, 1024, boxes.sgemm_medium, 6, 0},
                               {16, 4096, 4096, boxes.sgemm_skinny, 6, 1.0}};
  Verdict verdict = Verdict::pass;
  try {
    std::unique_ptr<tunekit::OpBase> op =
        tunekit::cuda::find_builtin_op("sgemm").make(setup.context, *setup.pool);
    for (const SgemmShape& s : shapes) verdict = worse(verdict, sgemm_shape(setup, *op, s, r));
  } catch (const std::exception& e) {
    verdict = Verdict::error;
    r.notes.push_back(std::string("stopped: ") + e.what());
  }
  r.verdict = verdict;
  std::string summary;
  for (const auto& s : r.data["shapes"])
    summary += fmt::format("{}{}: {}", summary.empty() ? "" : "; ", s["shape"].get<std::string>(),
                           percent(s["generated_vs_cublas"].get<double>()) + " of cuBLAS");
  r.summary = summary.empty() ? "nothing measured" : summary;
  r.notes.push_back(
      "the verdict is judged on the best generated kernel, since the tuner's "
      "winner may be a cuBLAS anchor itself (then it serves cuBLAS: also shown)");
  r.seconds = since(start);
  return r;
}

CheckResult check_bandwidth(Setup& setup, const TimeBoxes& boxes) {
  CheckResult r;
  r.columns = {"op", "shape", "winner", "time", "GB/s", "of peak", "verdict"};
  r.data["ops"] = nlohmann::json::array();
  const auto start = std::chrono::steady_clock::now();
  Verdict verdict = Verdict::pass;
  try {
    const DramPeak peak = dram_peak(setup);
    r.data["peak"] = peak.json;
    r.notes.push_back(
        peak.bytes_per_second > 0
            ? fmt::format("DRAM peak {:.0f} GB/s: {}", peak.bytes_per_second * 1e-9, peak.source)
            : "no DRAM peak known for this device: pass --dram-peak-gbs");
    verdict = worse(verdict, bandwidth_op(setup, "softmax", boxes.softmax, peak, r));
    verdict = worse(verdict, bandwidth_op(setup, "rmsnorm", boxes.rmsnorm, peak, r));
  } catch (const std::exception& e) {
    verdict = Verdict::error;
    r.notes.push_back(std::string("stopped: ") + e.what());
  }
  r.verdict = verdict;
  std::string summary;
  for (const auto& o : r.data["ops"])
    summary +=
        fmt::format("{}{}: {} of peak", summary.empty() ? "" : "; ", o["op"].get<std::string>(),
                    percent(o["fraction_of_peak"].get<double>()));
  r.summary = summary.empty() ? "nothing measured" : summary;
  r.seconds = since(start);
  return r;
}

}  // namespace gpu_check
