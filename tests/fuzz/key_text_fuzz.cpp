// libFuzzer target for the key/config text parser (outside data: CLI shapes, stored keys).
// Property: parse either throws ParseError/UsageError or yields a key whose text form parses
// back to an equal key with the same digest, and whose digest (hashed while encoding, without
// building the encoding) is the digest of encode().
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tunekit/errors.hpp"
#include "tunekit/key.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tunekit::Key key;
  try {
    key = tunekit::Key::parse(text);
  } catch (const tunekit::UsageError&) {
    return 0;
  }
  tunekit::Key back = tunekit::Key::parse(key.text());
  if (!(back == key) || !(back.digest() == key.digest())) __builtin_trap();
  if (!(key.digest() == tunekit::Digest::of(key.encode()))) __builtin_trap();
  return 0;
}
