// libFuzzer target: the CUDA module cache's cubin files (src/backends/cuda/cubin_file.cpp). The
// key is taken from the input's own header bytes when it has them, so inputs get past the key
// check and reach the size, arch and digest checks. Must never crash, hang or over-read; a
// decoded image must encode back to the very bytes it came from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "backends/cuda/cubin_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  tunekit::Digest key{};
  if (size >= 24) {
    for (int i = 0; i < 8; ++i) {
      key.high |= std::uint64_t{data[8 + i]} << (8 * i);
      key.low |= std::uint64_t{data[16 + i]} << (8 * i);
    }
  }
  for (const char* arch : {"sm_90", "sm_80"}) {
    std::string why;
    const auto image = tunekit::detail::decode_cubin_file(bytes, key, arch, why);
    if (image && tunekit::detail::encode_cubin_file(key, *image) != bytes) std::abort();
    if (!image && why.empty()) std::abort();
  }
  return 0;
}
