// Reporters render a TuneReport to a stream. Found by name ("console", "json").
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/report.hpp"

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

// `text` safe to print to a terminal: control characters (ESC, CR, DEL, ...), C1 controls,
// bidi overrides and malformed UTF-8 bytes are escaped ("\x1b", "\u{202e}"); printable
// ASCII and well-formed UTF-8 pass unchanged. Every outside string (names, configs, messages
// from KT files, stores, artifacts) goes through it before reaching a terminal.
std::string terminal_safe(std::string_view text);

}  // namespace tunekit
