// Tests for src/core/terminal_text.cpp: outside text is shown, never obeyed by the terminal.
#include <gtest/gtest.h>

#include <string>

#include "tunekit/terminal_text.hpp"

namespace tunekit {
namespace {

TEST(TerminalSafe, PrintableAsciiAndUtf8PassUnchanged) {
  EXPECT_EQ(terminal_safe("m=256,n=256 \"x\" \\ ~"), "m=256,n=256 \"x\" \\ ~");
  EXPECT_EQ(terminal_safe("1.23 µs 2.00× 東京 🚀"), "1.23 µs 2.00× 東京 🚀");
  EXPECT_EQ(terminal_safe(""), "");
}

TEST(TerminalSafe, ControlCharactersAreEscaped) {
  EXPECT_EQ(terminal_safe("\x1b]0;pwned\x07name"), "\\x1b]0;pwned\\x07name");
  EXPECT_EQ(terminal_safe("a\rb\nc\td\x7f"), "a\\x0db\\x0ac\\x09d\\x7f");
  EXPECT_EQ(terminal_safe(std::string("a\0b", 3)), "a\\x00b");
}

TEST(TerminalSafe, NewlinesMayBeKeptForMultiLineMessages) {
  EXPECT_EQ(terminal_safe("one\ntwo\r\x1b", /*keep_newlines=*/true), "one\ntwo\\x0d\\x1b");
}

TEST(TerminalSafe, C1ControlsBidiOverridesAndMalformedBytesAreEscaped) {
  EXPECT_EQ(terminal_safe("\xc2\x9b"
                          "2J"),
            "\\u{009b}2J");  // CSI as a code point
  EXPECT_EQ(terminal_safe("\x9b"
                          "2J"),
            "\\x9b2J");  // CSI as a raw 8-bit byte
  EXPECT_EQ(terminal_safe("abc\xe2\x80\xae"
                          "cba"),
            "abc\\u{202e}cba");
  EXPECT_EQ(terminal_safe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(terminal_safe("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(terminal_safe("\xe6\x9d"), "\\xe6\\x9d");           // truncated sequence
  EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

}  // namespace
}  // namespace tunekit
