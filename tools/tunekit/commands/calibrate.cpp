// tunekit calibrate [--json] [--out PROFILE.json] [--quick] [--threads N] [--quiet]
// Measures this host's envelope (DESIGN §9) and stores it as the device's profile (under the
// cache directory, by device digest), or writes it to --out.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/bounds.hpp"
#include "commands/commands.hpp"
#include "commands/environment.hpp"
#include "commands/verbosity.hpp"
#include "progress_bar.hpp"
#include "tunekit/calibration.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli {
namespace {

struct CalibrateCommand {
  bool json = false;
  std::string out;
  bool quick = false;
  int threads = 0;
  bool quiet = false;  // -q (the tool's flag): no progress
  Log log;             // the tool's log (-v/-q, TUNEKIT_LOG)
};

std::string rate(double v, const char* unit) {
  if (v >= 1e9) return fmt::format("{:.2f} G{}", v / 1e9, unit);
  if (v >= 1e6) return fmt::format("{:.2f} M{}", v / 1e6, unit);
  return fmt::format("{:.3g} {}", v, unit);
}

std::string bytes_text(double b) {
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  return fmt::format("{:.0f} KiB", b / 1024);
}

void print_console(const DeviceProfile& p, const Calibration& c, std::ostream& out) {
  const Envelope& e = p.envelope;
  out << fmt::format("{} ({} threads, {} f32 lanes)\n", p.product, e.threads, e.simd_lanes);
  auto line = [&](const char* name, const std::string& value, double spread) {
    out << fmt::format("  {:<24} {:>14}  ± {:.1f} %\n", name, value, 100 * spread);
  };
  line("peak FLOP/s, 1 thread", rate(e.peak_flops_1.value, "FLOP/s"), e.peak_flops_1.spread);
  line("peak FLOP/s, all threads", rate(e.peak_flops_all.value, "FLOP/s"), e.peak_flops_all.spread);
  line("DRAM bandwidth, 1 thread", rate(e.dram_bw_1.value, "B/s"), e.dram_bw_1.spread);
  line("DRAM bandwidth, all", rate(e.dram_bw_all.value, "B/s"), e.dram_bw_all.spread);
  line("cache bandwidth, 1 thread", rate(e.cache_bw_1.value, "B/s"), e.cache_bw_1.spread);
  line("cache capacity", bytes_text(e.cache_bytes.value), e.cache_bytes.spread);
  line("dispatch overhead", fmt::format("{:.2f} us", e.launch_seconds.value * 1e6),
       e.launch_seconds.spread);
  out << fmt::format("  {:<24} {:>14}\n", "FMA chains for peak", e.fma_chains);
  if (!c.cache_step_found)
    out << "  (no capacity step in the sweep: the capacity is the reported cache size)\n";
  out << fmt::format("calibrated in {:.1f} s{}\n", c.seconds, p.quick ? " (quick)" : "");
}

void run_calibrate(const CalibrateCommand& command) {
  // Only the cache location matters here: a bad TUNEKIT_MODE must not stop a calibration.
  const TunerOptions env = options_ignoring_mode();
  cpu::ThreadPool pool(command.threads);
  cpu::CpuDevice device;
  auto probe = cpu::make_calibration_probe(pool, command.quick ? 0.004 : 0.03);
  ProgressBar progress(std::cerr, ProgressBar::stderr_is_terminal(), ProgressBar::stderr_columns());
  CalibrationOptions options;
  options.quick = command.quick;
  std::string last_step;
  if (!command.quiet) {
    options.on_progress = [&](std::string_view what, std::size_t done, std::size_t total) {
      if (ProgressBar::stderr_is_terminal()) {
        progress.update(ProgressEvent{"calibrate", done, total, what, nullptr});
      } else if (what != last_step) {
        command.log.info(fmt::format("calibrate: {}", what));
      }
      last_step = std::string(what);
    };
  }
  const Calibration c = calibrate(*probe, options);
  progress.finish();
  const DeviceProfile profile = make_profile(device.identity(), c, command.quick);
  const std::string path = command.out.empty()
                               ? profile_path(env.model.profile_dir, profile.device_digest)
                               : command.out;
  write_profile(path, profile);
  if (command.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(profile.to_json());
    nlohmann::ordered_json sweep = nlohmann::ordered_json::array();
    for (const auto& p : c.sweep) sweep.push_back({{"bytes", p.bytes}, {"bandwidth", p.bandwidth}});
    nlohmann::ordered_json chains = nlohmann::ordered_json::array();
    for (const auto& p : c.fma_by_chains)
      chains.push_back({{"chains", p.chains}, {"flops", p.flops}});
    j["sweep"] = std::move(sweep);
    j["fma_by_chains"] = std::move(chains);
    j["cache_step_found"] = c.cache_step_found;
    j["path"] = path;
    std::cout << j.dump(2) << '\n';
  } else {
    print_console(profile, c, std::cout);
  }
  command.log.info(fmt::format("wrote device profile {}", path));
  if (!profile.envelope.usable())
    command.log.warn("the envelope lacks a constant; the model will decline");
}

}  // namespace

void register_calibrate(CLI::App& app) {
  auto command = std::make_shared<CalibrateCommand>();
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Measure this machine's envelope (peak FLOP/s, DRAM and cache bandwidth, cache "
      "capacity, dispatch overhead) for the cost model, and store it as the device's profile");
  sub->add_flag("--json", command->json,
                "Write the profile, the sweep and the chain sweep as JSON");
  sub->add_option("--out,-o", command->out,
                  "Write the profile to this file instead of the device's stored profile "
                  "(profiles/<device digest>.json beside the store)");
  sub->add_flag("--quick", command->quick,
                "A short, noisier calibration (about a second): fewer repeats, a coarser sweep");
  sub->add_option("--threads,-t", command->threads, "Worker threads (0: one per core)")
      ->transform(integer_in(0, 4096));
  sub->callback([command, sub] {
    command->log = tool_log(*sub);
    command->quiet = !shows_progress(*sub);
    run_calibrate(*command);
  });
}

}  // namespace tunekit::cli
