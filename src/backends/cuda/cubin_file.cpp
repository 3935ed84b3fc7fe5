#include "backends/cuda/cubin_file.hpp"

#include <cstdint>
#include <vector>

#include "tunekit/terminal_text.hpp"

namespace tunekit::detail {
namespace {

using cuda::ModuleImage;

constexpr std::string_view kMagic = "TKCUBIN1";
constexpr std::size_t kMaxImage = kMaxCubinImage;
constexpr std::size_t kMaxArch = kMaxCubinArch;
constexpr std::size_t kFixedHeader = kCubinFixedHeader;

void put_u64(std::string& out, std::uint64_t v, int bytes = 8) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_u64(std::string_view in, std::size_t at, int bytes = 8) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= std::uint64_t{static_cast<unsigned char>(in[at + static_cast<std::size_t>(i)])} << (8 * i);
  return v;
}

void put_digest(std::string& out, const Digest& d) {
  put_u64(out, d.high);
  put_u64(out, d.low);
}

Digest get_digest(std::string_view in, std::size_t at) {
  return {get_u64(in, at), get_u64(in, at + 8)};
}

}  // namespace

std::string encode_cubin_file(const Digest& key, const ModuleImage& image) {
  const std::string_view binary(image.binary.data(), image.binary.size());
  std::string out(kMagic);
  put_digest(out, key);
  put_u64(out, binary.size());
  put_digest(out, Digest::of(binary));
  put_u64(out, image.arch.size(), 4);
  out += image.arch;
  out += binary;
  return out;
}

std::optional<ModuleImage> decode_cubin_file(std::string_view bytes, const Digest& key,
                                             const std::string& arch, std::string& why) {
  if (bytes.size() < kFixedHeader || bytes.substr(0, kMagic.size()) != kMagic) {
    why = "it is not a tunekit cubin file (no TKCUBIN1 header)";
    return std::nullopt;
  }
  if (get_digest(bytes, 8) != key) {
    why = "its key digest is not the one its name says";
    return std::nullopt;
  }
  const std::uint64_t size = get_u64(bytes, 24);
  const Digest digest = get_digest(bytes, 32);
  const std::uint64_t arch_size = get_u64(bytes, 48, 4);
  if (size > kMaxImage || arch_size > kMaxArch) {
    why = "its header declares a " + std::to_string(size) + "-byte image (the cap is " +
          std::to_string(kMaxImage) + ") or a " + std::to_string(arch_size) + "-byte arch";
    return std::nullopt;
  }
  const std::size_t image_at = kFixedHeader + static_cast<std::size_t>(arch_size);
  if (bytes.size() != image_at + size) {
    why = "it holds " + std::to_string(bytes.size()) + " bytes, its header says " +
          std::to_string(image_at + size) + " (truncated or extended)";
    return std::nullopt;
  }
  if (bytes.substr(kFixedHeader, arch_size) != arch) {
    // The file's bytes reach a terminal through the warning: made safe first.
    why = "it is for " + terminal_safe(bytes.substr(kFixedHeader, arch_size)) + ", not " + arch;
    return std::nullopt;
  }
  const std::string_view binary = bytes.substr(image_at);
  if (Digest::of(binary) != digest) {
    why = "its image does not match the digest in its header (corrupt)";
    return std::nullopt;
  }
  return ModuleImage{arch, std::vector<char>(binary.begin(), binary.end()), ""};
}

}  // namespace tunekit::detail
