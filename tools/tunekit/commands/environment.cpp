#include "commands/environment.hpp"

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace tunekit::cli {

TunerOptions options_ignoring_mode() {
  TunerOptions options = TunerOptions::from_environment([](const char* name) -> const char* {
    return std::string_view(name) == "TUNEKIT_MODE" ? nullptr : std::getenv(name);
  });
  use_own_program_for_workers(options);
  return options;
}

void use_own_program_for_workers(TunerOptions& options) {
  std::string& program = options.measure.isolation.worker_program;
  if (!program.empty()) return;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) program = self.string();  // else spawned workers say what to set
}

}  // namespace tunekit::cli
