#include <string>

#include "store/sqlite_store.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"

namespace tunekit {

std::string default_store_path(const std::function<const char*(const char*)>& getenv) {
  auto set = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v && *v ? v : "";
  };
  std::string dir = set("TUNEKIT_CACHE_DIR");
  if (dir.empty() && !set("XDG_CACHE_HOME").empty()) dir = set("XDG_CACHE_HOME") + "/tunekit";
  if (dir.empty() && !set("HOME").empty()) dir = set("HOME") + "/.cache/tunekit";
  if (dir.empty()) dir = ".tunekit-cache";
  return dir + "/choices.db";
}

std::unique_ptr<Store> open_store(std::string_view spec, const WarningSink& warn) {
  if (spec == "none" || spec == "memory") return nullptr;
  if (spec.rfind("sqlite:", 0) == 0 && spec.size() > 7) {
    return detail::open_sqlite_store(std::string(spec.substr(7)), warn);
  }
  throw UsageError("unknown store '" + std::string(spec) +
                   "': use sqlite:PATH, or none to keep choices in memory only");
}

}  // namespace tunekit
