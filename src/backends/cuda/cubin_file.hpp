// The cubin files of the CUDA module cache (module_cache.cpp): one compiled image with the key
// it was compiled for and a digest of its bytes, so a file that was truncated, altered, renamed
// or written for another key or arch is recognised on load. Private to src/backends/cuda.
//   "TKCUBIN1" | key digest (16) | image size (u64) | image XXH3-128 (16) | arch length (u32)
//   | arch | image                                   (integers and digest halves little-endian)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/cuda.hpp"
#include "tunekit/key.hpp"

namespace tunekit::detail {

inline constexpr std::size_t kMaxCubinImage = 64u << 20;  // real kernels: KBs to a few MBs
inline constexpr std::size_t kMaxCubinArch = 32;
inline constexpr std::size_t kCubinFixedHeader = 8 + 16 + 8 + 16 + 4;
inline constexpr std::size_t kMaxCubinFile = kCubinFixedHeader + kMaxCubinArch + kMaxCubinImage;

std::string encode_cubin_file(const Digest& key, const cuda::ModuleImage& image);

// The image a file's bytes hold when they are a valid file for `key` and `arch`; nullopt with
// the reason in `why` (terminal-safe) otherwise. Never throws for any input.
std::optional<cuda::ModuleImage> decode_cubin_file(std::string_view bytes, const Digest& key,
                                                   const std::string& arch, std::string& why);

}  // namespace tunekit::detail
