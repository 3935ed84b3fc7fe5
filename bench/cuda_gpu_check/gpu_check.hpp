// cuda_gpu_check: the checks `scripts/gpu-check` runs on a real GPU (issue #15, item 7), one
// file each, and the summary they are written into. Private to this program.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunekit/cpu.hpp"
#include "tunekit/cuda.hpp"
#include "tunekit/report.hpp"

namespace gpu_check {

// PASS: the goal is met; MISS: a performance goal is not; FAIL: a correctness check found a
// wrong result; ERROR: the check could not run to the end; INFO: numbers without a goal;
// NOT RUN: not reached (no device, or the run was cut before it).
enum class Verdict { pass, miss, fail, error, info, not_run };
std::string_view to_string(Verdict verdict);

// One check: its numbers (JSON), a table and notes for the markdown, its verdict.
struct CheckResult {
  std::string name;   // "validation", "timing", ...
  std::string title;  // a heading
  std::string goal;   // what PASS means
  Verdict verdict = Verdict::not_run;
  std::string summary;  // one line
  double seconds = 0;   // wall time the check took
  nlohmann::json data = nlohmann::json::object();
  std::vector<std::string> columns;  // the markdown table
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // markdown bullets
};

// A time box: a check asks it before starting each piece of work.
class Deadline {
 public:
  explicit Deadline(double seconds)
      : end_(std::chrono::steady_clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))) {}
  bool passed() const { return Clock::now() >= end_; }
  double left() const { return std::chrono::duration<double>(end_ - Clock::now()).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point end_;
};

// Seconds since `start`.
double since(std::chrono::steady_clock::time_point start);

// The run's time shared among the checks (--seconds).
struct TimeBoxes {
  double validation = 0, timing = 0;
  double sgemm_large = 0, sgemm_medium = 0, sgemm_skinny = 0;
  double softmax = 0, rmsnorm = 0;
  double crash = 0;
  static TimeBoxes of_total(double seconds);
  double sgemm() const { return sgemm_large + sgemm_medium + sgemm_skinny; }
  double bandwidth() const { return softmax + rmsnorm; }
  // Every box but the crash check's times `factor` (a run behind its schedule catches up).
  TimeBoxes scaled(double factor) const;
};

// What the checks run on.
struct Setup {
  std::shared_ptr<tunekit::cuda::Context> context;
  tunekit::cuda::CudaDevice* device = nullptr;
  tunekit::cpu::ThreadPool* pool = nullptr;  // the CPU references
  bool quick = false;
  double dram_peak = 0;  // bytes per second from --dram-peak-gbs; 0: from the device
};

// (a) every candidate of the small spaces, a seeded sample of sgemm and every anchor,
// validated at odd shapes.
CheckResult check_validation(Setup& setup, double seconds);
// (b) time_routine (isolated, queued) vs a CUDA graph of 1000 launches read with events.
CheckResult check_timing(Setup& setup, double seconds);
// (c) tuned sgemm vs the best cuBLAS anchor of the same search.
CheckResult check_sgemm(Setup& setup, const TimeBoxes& boxes);
// (d) tuned softmax and rmsnorm vs the device's DRAM bandwidth.
CheckResult check_bandwidth(Setup& setup, const TimeBoxes& boxes);

// (e) the crash candidate, in a child process forked before this process makes any CUDA call
// (a driver context does not survive fork(), and the crash kills the context it runs in). The
// child waits until run() tells it to start, so it does not share the GPU with the other checks.
class CrashChild {
 public:
  // Forks now; call it before anything touches CUDA. `selector` picks the device.
  static CrashChild fork_waiting(const std::string& selector);
  CrashChild(CrashChild&& other) noexcept;
  CrashChild& operator=(CrashChild&&) = delete;
  CrashChild(const CrashChild&) = delete;
  CrashChild& operator=(const CrashChild&) = delete;
  ~CrashChild();  // cancel()

  // Starts the child's check and waits for its answer (killing it after `seconds`).
  CheckResult run(double seconds);
  // Tells the child to exit without running anything, and reaps it.
  void cancel();

 private:
  CrashChild() = default;
  int pid_ = -1;
  int gate_ = -1;    // write end: one byte starts the check, EOF cancels it
  int answer_ = -1;  // read end: the child's JSON
};

// Every product-level fact the summary names.
struct RunInfo {
  std::string date;     // UTC, ISO 8601
  std::string command;  // how the run was started (--command, else argv)
  std::string argv;     // this program's own command line
  bool quick = false;
  double seconds_limit = 0;
  tunekit::cuda::DriverStatus driver;
  std::string nvrtc;
  std::optional<tunekit::cuda::DeviceInfo> device;
  std::string status = "running";  // "running", "done", "no_device", "error"
  std::string message;
};

// Writes DIR/gpu-check.json and DIR/gpu-check.md (each atomically: a temporary file renamed).
void write_summary(const std::filesystem::path& dir, const RunInfo& run,
                   const std::vector<CheckResult>& checks);

// Formatting shared by the checks.
std::string seconds_text(double seconds);  // "4.82 us", "1.203 ms", "2.5 s"
std::string fixed(double value, int decimals);
std::string percent(double ratio);  // 0.934 -> "93.4 %"
// A message cut to `limit` characters (NVRTC logs can be long).
std::string clipped(std::string_view text, std::size_t limit = 300);

// The tuner's options every tuned check uses: a memory store, trials in process, the strategy
// and a wall-clock budget.
tunekit::TuneReport tune_op(Setup& setup, const tunekit::OpBase& op, const tunekit::Key& key,
                            double budget_seconds);
// The per-candidate entries of a report split: the best measured cuBLAS anchor and the best
// measured other candidate (nullptr when none was measured).
struct BestOf {
  const tunekit::CandidateReport* anchor = nullptr;
  const tunekit::CandidateReport* generated = nullptr;
};
BestOf best_of(const tunekit::TuneReport& report, const std::vector<std::size_t>& anchors);

}  // namespace gpu_check
