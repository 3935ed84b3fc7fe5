// cuda_gpu_check: the checks of the CUDA backend that need a GPU (issue #15, item 7), written to
// DIR/gpu-check.json and DIR/gpu-check.md after every check (a run cut short keeps what it
// did). scripts/gpu-check builds and runs it; alone:
//   cuda_gpu_check [--out DIR] [--quick] [--seconds S] [--device SELECTOR]
//                  [--dram-peak-gbs X] [--command TEXT]
// Without a CUDA device it writes both files saying so, says so on stderr and exits 0. Exit
// status: 0 when every check ran and found nothing wrong (a performance goal missed is MISS in
// the summary, not an error); 1 when a check found a wrong result or could not run; 2 for bad
// flags.
#include <signal.h>

#include <algorithm>
#include <ctime>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "cuda_gpu_check/gpu_check.hpp"

namespace gpu_check {
namespace {

namespace cuda = tunekit::cuda;

constexpr std::string_view kUsage =
    "usage: cuda_gpu_check [--out DIR] [--quick] [--seconds S] [--device SELECTOR]\n"
    "                      [--dram-peak-gbs X] [--command TEXT]\n"
    "  --out DIR          where gpu-check.json and gpu-check.md go (default gpu-check-out)\n"
    "  --quick            smaller samples and time boxes (default --seconds 120, else 270)\n"
    "  --seconds S        the whole run's time box, shared among the checks\n"
    "  --device SELECTOR  a CUDA device index or part of its name (default: the first)\n"
    "  --dram-peak-gbs X  judge bandwidth against X GB/s instead of the device's peak\n"
    "  --command TEXT     how the run was started, for the summary (default: this command)\n";

struct Flags {
  std::filesystem::path out = "gpu-check-out";
  bool quick = false;
  double seconds = 0;
  std::string device;
  double dram_peak_gbs = 0;
  std::string command;
};

double positive(std::string_view flag, const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(value > 0) || value > 1e7)
    throw std::invalid_argument(fmt::format("{} takes a positive number, not '{}'", flag, text));
  return value;
}

Flags parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", flag));
      return argv[++i];
    };
    if (flag == "--out") {
      f.out = value();
    } else if (flag == "--quick") {
      f.quick = true;
    } else if (flag == "--seconds") {
      f.seconds = positive(flag, value());
    } else if (flag == "--device") {
      f.device = value();
    } else if (flag == "--dram-peak-gbs") {
      f.dram_peak_gbs = positive(flag, value());
    } else if (flag == "--command") {
      f.command = value();
    } else {
      throw std::invalid_argument(fmt::format("unknown argument '{}'", flag));
    }
  }
  if (f.seconds == 0) f.seconds = f.quick ? 120 : 270;
  return f;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// The command line as a shell would take it back.
std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    const bool plain = !a.empty() && a.find_first_of(" \t'\"$\\;&|<>*?()") == std::string::npos;
    std::string quoted = "'";
    for (const char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (i ? " " : "") + (plain ? std::string(a) : quoted + "'");
  }
  return out;
}

// The five checks, in the order they run; each check function fills in the rest.
std::vector<CheckResult> planned_checks() {
  auto check = [](std::string name, std::string title, std::string goal) {
    CheckResult c;
    c.name = std::move(name);
    c.title = std::move(title);
    c.goal = std::move(goal);
    c.summary = "not run";
    return c;
  };
  return {
      check("validation", "(a) Every candidate validated at odd shapes",
            "every candidate built and validated against the CPU reference (ok or rejected)"),
      check("timing", "(b) Timing accuracy vs a CUDA-graph replay of 1000 launches",
            "isolated and queued medians within 3 % of the replay's time per launch"),
      check("sgemm", "(c) Tuned sgemm vs cuBLAS",
            "best generated kernel >= 90 % of the best cuBLAS anchor at 4096^3, >= 100 % at "
            "m=16,n=4096,k=4096"),
      check("bandwidth", "(d) Tuned softmax and rmsnorm vs DRAM bandwidth",
            "(bytes read + written) / time >= 80 % of the DRAM peak at rows=8192,cols=8192"),
      check("crash", "(e) A crash candidate (illegal address) is classified device_lost",
            "the candidate's outcome is device_lost, the search ends with a FatalError naming "
            "it, the context reports lost() and refuses later work, the process tears down "
            "cleanly"),
  };
}

// Runs `check` into `slot`, keeping the slot's name, title and goal; an escaped exception is
// the check's ERROR.
void run_into(CheckResult& slot, const std::function<CheckResult()>& check) {
  std::cerr << "cuda_gpu_check: " << slot.title << "\n";
  CheckResult c;
  try {
    c = check();
  } catch (const std::exception& e) {
    c.verdict = Verdict::error;
    c.summary = std::string("stopped: ") + e.what();
  }
  c.name = slot.name;
  c.title = slot.title;
  c.goal = slot.goal;
  slot = std::move(c);
  std::cerr << fmt::format("cuda_gpu_check: {}: {} ({:.1f} s)\n", to_string(slot.verdict),
                           slot.summary, slot.seconds);
}

int exit_status(const std::vector<CheckResult>& checks) {
  for (const CheckResult& c : checks)
    if (c.verdict == Verdict::fail || c.verdict == Verdict::error || c.verdict == Verdict::not_run)
      return 1;
  return 0;
}

int run_checks(const Flags& flags, RunInfo& run, std::vector<CheckResult>& checks,
               CrashChild* crash) {
  Setup setup;
  try {
    setup.context = cuda::Context::open(flags.device);
  } catch (const std::exception& e) {
    if (crash) crash->cancel();
    run.status = "error";
    run.message = std::string("could not open the CUDA device: ") + e.what();
    write_summary(flags.out, run, checks);
    std::cerr << "cuda_gpu_check: " << run.message << "\n";
    return 1;
  }
  run.device = setup.context->info();
  cuda::CudaDevice device(setup.context);
  tunekit::cpu::ThreadPool pool(0);
  setup.device = &device;
  setup.pool = &pool;
  setup.quick = flags.quick;
  setup.dram_peak = flags.dram_peak_gbs * 1e9;
  const TimeBoxes boxes = TimeBoxes::of_total(flags.seconds);
  const Deadline overall(flags.seconds);
  // A check's boxes cut to what is left once the later checks' shares are kept, so a check that
  // overran (a slow CPU reference, a long compile) never takes the crash check's time.
  auto fit = [&](double share, double later) {
    return std::max(0.1, std::min(1.0, (overall.left() - later) / share));
  };
  const std::function<CheckResult()> steps[] = {
      [&] {
        const double later = boxes.timing + boxes.sgemm() + boxes.bandwidth() + boxes.crash;
        return check_validation(setup, boxes.validation * fit(boxes.validation, later));
      },
      [&] {
        const double later = boxes.sgemm() + boxes.bandwidth() + boxes.crash;
        return check_timing(setup, boxes.timing * fit(boxes.timing, later));
      },
      [&] {
        const double later = boxes.bandwidth() + boxes.crash;
        return check_sgemm(setup, boxes.scaled(fit(boxes.sgemm(), later)));
      },
      [&] { return check_bandwidth(setup, boxes.scaled(fit(boxes.bandwidth(), boxes.crash))); },
      [&]() -> CheckResult {
        if (!crash) throw std::runtime_error("the crash check's child process could not start");
        return crash->run(boxes.crash);
      },
  };
  write_summary(flags.out, run, checks);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    run_into(checks[i], steps[i]);
    write_summary(flags.out, run, checks);
  }
  run.status = "done";
  write_summary(flags.out, run, checks);
  return exit_status(checks);
}

int main_checked(int argc, char** argv) {
  Flags flags;
  try {
    flags = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "cuda_gpu_check: " << e.what() << "\n" << kUsage;
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // the crash child may be gone when it is told to start
  RunInfo run;
  run.date = utc_now();
  run.argv = command_line(argc, argv);
  run.command = flags.command.empty() ? run.argv : flags.command;
  run.quick = flags.quick;
  run.seconds_limit = flags.seconds;
  std::vector<CheckResult> checks = planned_checks();
  // Forked before anything below touches CUDA (driver_status loads and initialises the driver).
  std::optional<CrashChild> crash;
  try {
    crash.emplace(CrashChild::fork_waiting(flags.device));
  } catch (const std::exception& e) {
    std::cerr << "cuda_gpu_check: the crash check cannot run: " << e.what() << "\n";
  }
  run.driver = cuda::driver_status();
  run.nvrtc = cuda::nvrtc_version();
  if (cuda::list_devices().empty()) {
    if (crash) crash->cancel();
    run.status = "no_device";
    run.message =
        "no CUDA device: " +
        (run.driver.loaded ? "the driver (" + std::to_string(run.driver.version) + ") reports none"
                           : run.driver.message);
    write_summary(flags.out, run, checks);
    std::cerr << "cuda_gpu_check: " << run.message << " (nothing was checked; wrote "
              << (flags.out / "gpu-check.md").string() << ")\n";
    return 0;
  }
  const int status = run_checks(flags, run, checks, crash ? &*crash : nullptr);
  std::cerr << "cuda_gpu_check: wrote " << (flags.out / "gpu-check.md").string() << " and "
            << (flags.out / "gpu-check.json").string() << "\n";
  return status;
}

}  // namespace
}  // namespace gpu_check

int main(int argc, char** argv) {
  try {
    return gpu_check::main_checked(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "cuda_gpu_check: " << e.what() << "\n";
    return 1;
  }
}
