#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::off:
      return "off";
    case Mode::cached:
      return "cached";
    case Mode::tune:
      return "tune";
    case Mode::force:
      return "force";
  }
  return "unknown";
}

Mode mode_from_string(std::string_view text) {
  for (Mode m : {Mode::off, Mode::cached, Mode::tune, Mode::force})
    if (to_string(m) == text) return m;
  throw UsageError("unknown mode '" + std::string(text) + "': use off, cached, tune or force");
}

TunerOptions TunerOptions::from_environment(const std::function<const char*(const char*)>& getenv) {
  TunerOptions o;
  if (const char* mode = getenv("TUNEKIT_MODE"); mode && *mode) {
    try {
      o.mode = mode_from_string(mode);
    } catch (const UsageError& e) {
      throw UsageError(std::string("TUNEKIT_MODE: ") + e.what());
    }
  }
  o.store = "sqlite:" + default_store_path(getenv);
  // Device profiles (tunekit calibrate) live beside the store file.
  o.profile_dir =
      (std::filesystem::path(default_store_path(getenv)).parent_path() / "profiles").string();
  if (const char* dir = getenv("TUNEKIT_ARTIFACT_DIR"); dir && *dir) o.artifact_dir = dir;
  o.on_warning = [](std::string_view message) { std::cerr << message << '\n'; };
  return o;
}

TunerOptions TunerOptions::from_environment() {
  return from_environment([](const char* name) { return std::getenv(name); });
}

}  // namespace tunekit
