// bucketed: an op whose sequence length varies from call to call. Bucketing the length to
// powers of two lets one stored choice serve every length in a bucket (searched at the
// bucket's upper bound), instead of one search per length.
#include <cstdint>
#include <iostream>
#include <span>
#include <vector>

#include <tunekit/tunekit.hpp>

struct Scale {  // y = 2 * x over seq rows of width 64
  std::int64_t seq = 0;
  std::vector<float> x, y;
};

Scale make_scale(std::int64_t seq) {
  Scale a{seq, std::vector<float>(std::size_t(seq * 64)),
          std::vector<float>(std::size_t(seq * 64))};
  for (std::size_t i = 0; i < a.x.size(); ++i) a.x[i] = float(i % 5);
  return a;
}

int main() {
  using tunekit::Key;
  tunekit::Op<Scale> scale("scale", /*schema=*/1);
  scale.describe("y = 2x, one row per sequence position")
      .key_field({"seq", tunekit::Value::Type::integer, "sequence length", std::nullopt, 1, 4096})
      .key([](const Scale& a) {
        return Key{{"seq", a.seq}};
      })
      // Every candidate must serve every length of a bucket, not only its upper bound.
      .bucket("seq", tunekit::Bucketing::pow2())
      .inputs([](const Key& k) { return make_scale(k.integer("seq")); })
      .outputs([](Scale& a) { return std::vector{tunekit::OutputView::of(std::span(a.y))}; })
      .candidate("loop",
                 [](Scale& a) {
                   for (std::size_t i = 0; i < a.x.size(); ++i) a.y[i] = 2.0f * a.x[i];
                 })
      .candidate("unroll4", [](Scale& a) {
        std::size_t i = 0;
        for (; i + 4 <= a.x.size(); i += 4) {
          a.y[i] = 2.0f * a.x[i];
          a.y[i + 1] = 2.0f * a.x[i + 1];
          a.y[i + 2] = 2.0f * a.x[i + 2];
          a.y[i + 3] = 2.0f * a.x[i + 3];
        }
        for (; i < a.x.size(); ++i) a.y[i] = 2.0f * a.x[i];
      });

  tunekit::cpu::CpuDevice device;
  tunekit::Tuner tuner(device, tunekit::TunerOptions::from_environment());  // TUNEKIT_MODE
  for (std::int64_t seq : {100, 120, 128, 129}) {
    Scale args = make_scale(seq);
    const Key key = scale.key_of(args);
    // 100, 120 and 128 share the entry of seq=128; 129 starts the bucket of seq=256.
    std::cout << key.text() << " -> " << scale.bucket_of(key).text() << "  ["
              << scale.bucket_text(key) << "]\n";
    tuner.run(scale, args);
  }
}
