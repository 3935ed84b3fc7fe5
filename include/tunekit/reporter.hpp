// Reporters render a TuneReport to a stream. Found by name ("console", "json").
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/report.hpp"
#include "tunekit/terminal_text.hpp"  // reporters escape outside strings with it

namespace tunekit {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void write(const TuneReport& report, std::ostream& out) = 0;
};

// "console" (a table) or "json"; an unknown name is a UsageError listing the known ones.
std::unique_ptr<Reporter> make_reporter(std::string_view name);
std::vector<std::string> reporter_names();

// The JSON text of a report (the object the "json" reporter writes).
std::string to_json(const TuneReport& report, int indent = 2);

}  // namespace tunekit
