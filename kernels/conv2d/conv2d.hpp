// The 2D convolution every device backend tunes (OpenCL, CUDA): its host arguments, key
// limits, input generator and the double-precision reference that defines "correct". There is
// no CPU conv2d op; this is what the device ops share. Private to kernels/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tunekit/key.hpp"

namespace tunekit::kernels {

// Host padding of the output (and so of the input): multiples of the largest device tile.
inline constexpr std::size_t kConv2dPadW = 128;  // largest BX * TX
inline constexpr std::size_t kConv2dPadH = 64;   // largest BY * TY
inline constexpr std::int64_t kConv2dMaxImage = 16384;
inline constexpr std::int64_t kConv2dMaxFilter = 17;

// A valid correlation of an (h + fh - 1) x (w + fw - 1) input with an fh x fw filter.
struct Conv2dHost {
  std::size_t h = 0, w = 0, fh = 0, fw = 0;
  std::vector<float> in;      // (h + fh - 1) x (w + fw - 1)
  std::vector<float> filter;  // fh x fw
  std::vector<float> out;     // h x w
};

// f32, dimensions in range, and the padded image at most about 2^26 elements (UsageError).
void check_conv2d_key(const Key& key);
// Seeded inputs for a checked key (set 0: the one tuning times on).
Conv2dHost make_conv2d_host(const Key& key, int input_set);
void conv2d_reference(Conv2dHost& a);

}  // namespace tunekit::kernels
