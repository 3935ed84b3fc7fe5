// libFuzzer target for the artifact parser (outside data: files in TUNEKIT_ARTIFACT_DIR).
// Property: parse either throws a UsageError (ParseError) or yields an artifact whose JSON
// parses back to the same identity, candidate and config.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tunekit/artifact.hpp"
#include "tunekit/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tunekit::Artifact a;
  try {
    a = tunekit::Artifact::parse(text);
  } catch (const tunekit::UsageError&) {
    return 0;
  }
  tunekit::Artifact back = tunekit::Artifact::parse(a.to_json());
  if (!(back.key == a.key) || back.candidate != a.candidate || !(back.config == a.config) ||
      !(back.identity_digest() == a.identity_digest()))
    __builtin_trap();
  return 0;
}
