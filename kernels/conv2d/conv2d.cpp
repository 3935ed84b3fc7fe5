#include "conv2d/conv2d.hpp"

#include <random>
#include <string>

#include "common.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::kernels {

void check_conv2d_key(const Key& key) {
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 26;
  require_f32(key, "conv2d");
  const auto h = key_dimension(key, "h", "conv2d", kConv2dMaxImage);
  const auto w = key_dimension(key, "w", "conv2d", kConv2dMaxImage);
  key_dimension(key, "fh", "conv2d", kConv2dMaxFilter);
  key_dimension(key, "fw", "conv2d", kConv2dMaxFilter);
  if (static_cast<double>(round_up(h, kConv2dPadH) + kConv2dMaxFilter) *
          static_cast<double>(round_up(w, kConv2dPadW) + kConv2dMaxFilter) >
      static_cast<double>(kMaxElements))
    throw UsageError("conv2d: h x w is limited to about 2^26 elements (padded); got h=" +
                     std::to_string(h) + ", w=" + std::to_string(w));
}

Conv2dHost make_conv2d_host(const Key& key, int input_set) {
  Conv2dHost host;
  host.h = static_cast<std::size_t>(key.integer("h"));
  host.w = static_cast<std::size_t>(key.integer("w"));
  host.fh = static_cast<std::size_t>(key.integer("fh"));
  host.fw = static_cast<std::size_t>(key.integer("fw"));
  host.in.resize((host.h + host.fh - 1) * (host.w + host.fw - 1));
  host.filter.resize(host.fh * host.fw);
  host.out.assign(host.h * host.w, 0.0f);
  std::mt19937 rng = input_rng(0x5eed0c0du, input_set);
  fill_uniform(host.in, rng, -1.0f, 2.0f);
  fill_uniform(host.filter, rng, -1.0f, 2.0f);
  return host;
}

void conv2d_reference(Conv2dHost& a) {
  const std::size_t in_w = a.w + a.fw - 1;
  for (std::size_t y = 0; y < a.h; ++y) {
    for (std::size_t x = 0; x < a.w; ++x) {
      double acc = 0;
      for (std::size_t i = 0; i < a.fh; ++i)
        for (std::size_t j = 0; j < a.fw; ++j)
          acc += static_cast<double>(a.in[(y + i) * in_w + x + j]) * a.filter[i * a.fw + j];
      a.out[y * a.w + x] = static_cast<float>(acc);
    }
  }
}

}  // namespace tunekit::kernels
