#include "commands/environment.hpp"

#include <cstdlib>
#include <string_view>

namespace tunekit::cli {

TunerOptions options_ignoring_mode() {
  return TunerOptions::from_environment([](const char* name) -> const char* {
    return std::string_view(name) == "TUNEKIT_MODE" ? nullptr : std::getenv(name);
  });
}

}  // namespace tunekit::cli
