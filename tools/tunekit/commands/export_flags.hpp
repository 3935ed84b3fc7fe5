// --export-kt FILE / --export-t4 FILE: shared by `tunekit tune` and `tunekit replay`.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace tunekit {
class Log;
class Recording;
}  // namespace tunekit

namespace tunekit::cli {

struct ExportFlags {
  std::string kernel_tuner;  // --export-kt FILE
  std::string t4;            // --export-t4 FILE

  void add_to(CLI::App& command, const std::string& what);
  bool any() const { return !kernel_tuner.empty() || !t4.empty(); }
  // Writes the files asked for and says so on `log` (info); errors are UsageErrors.
  void write(const Recording& run, const Log& log) const;
};

}  // namespace tunekit::cli
