// Outside text made safe to print on a terminal (DESIGN §8 "Files are an attack surface").
#pragma once

#include <string>
#include <string_view>

namespace tunekit {

// `text` safe to print to a terminal: control characters (ESC, CR, DEL, ...), C1 controls,
// bidi overrides and malformed UTF-8 bytes are escaped ("\x1b", "\u{202e}"); printable ASCII
// and well-formed UTF-8 pass unchanged. Every outside string (names, configs, messages from KT
// files, stores, artifacts) goes through it before reaching a terminal.
// `keep_newlines` passes '\n' through, for multi-line text such as an error message.
std::string terminal_safe(std::string_view text, bool keep_newlines = false);

}  // namespace tunekit
