// Outside text made safe to print: names, configs and messages from Kernel Tuner files, stores
// and artifacts must not drive the user's terminal (move the cursor, retitle the window, hide
// what follows, reorder text with bidi overrides).
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "tunekit/terminal_text.hpp"

namespace tunekit {
namespace {

// Length of the well-formed UTF-8 sequence at `s[i]` and its code point, or 0 when malformed
// (overlong forms, surrogates, truncation): a malformed byte is escaped, not passed on.
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char b = byte(0);
  const std::size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 ? 2 : 0;
  if (n == 0 || b > 0xF4 || i + n > s.size()) return 0;
  cp = b & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(k) & 0x3F);
  }
  static constexpr std::uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// C1 controls (0x9B is CSI on many terminals) and the bidi embeddings, overrides and isolates.
bool is_dangerous(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string terminal_safe(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c >= 0x20 && c < 0x7F) || (keep_newlines && c == '\n')) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t n = c < 0x80 ? 0 : utf8_sequence(text, i, cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);  // ESC, CR, DEL, a stray byte: shown, not obeyed
      ++i;
    } else if (is_dangerous(cp)) {
      out += fmt::format("\\u{{{:04x}}}", cp);
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace tunekit
