// libFuzzer target for the T1 space-file reader (outside data: spaces/*.json). Property:
// read_t1_space either throws a UsageError naming the file or yields a space; a space small
// enough to enumerate here enumerates (or throws a UsageError for an unknown name) and every
// enumerated configuration is valid.
#include <cstddef>
#include <cstdint>

#include "fuzz_file.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/space.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& file = tunekit::fuzz::write_input(data, size, "_t1.json");
  tunekit::Space space;
  try {
    space = tunekit::read_t1_space(file);
  } catch (const tunekit::UsageError&) {
    return 0;
  }
  if (space.cartesian_size() > 1e5) return 0;  // the fuzzer's time goes to the parser
  try {
    const tunekit::Enumeration e = space.enumerate();
    for (std::size_t i = 0; i < e.size(); ++i)
      if (!space.valid(e.config(i)) || e.index_of(e.config(i)) != i) __builtin_trap();
  } catch (const tunekit::UsageError&) {
  }
  return 0;
}
