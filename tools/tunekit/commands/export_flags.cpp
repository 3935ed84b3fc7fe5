#include "commands/export_flags.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "tunekit/interop.hpp"
#include "tunekit/log.hpp"

namespace tunekit::cli {

void ExportFlags::add_to(CLI::App& command, const std::string& what) {
  // Their own help section in every command that has them.
  command
      .add_option("--export-kt", kernel_tuner,
                  fmt::format("Write {} as a Kernel Tuner cache file (JSON)", what))
      ->group("Exports");
  command.add_option("--export-t4", t4, fmt::format("Write {} as a T4 results file (JSON)", what))
      ->group("Exports");
}

void ExportFlags::write(const Recording& run, const Log& log) const {
  const std::string summary =
      fmt::format("{} configurations, {} valid", run.size(), run.valid_count());
  if (!kernel_tuner.empty()) {
    write_kernel_tuner_cache(kernel_tuner, run);
    log.info(fmt::format("wrote Kernel Tuner cache file {} ({})", kernel_tuner, summary));
  }
  if (!t4.empty()) {
    write_t4_results(t4, run);
    log.info(fmt::format("wrote T4 results file {} ({})", t4, summary));
  }
}

}  // namespace tunekit::cli
