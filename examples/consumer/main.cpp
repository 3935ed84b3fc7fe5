// consumer: the smallest program built against an installed tunekit (find_package). One op,
// two candidates: the tuner validates both against the reference, times them and prints
// which one it picked. The store is TUNEKIT_CACHE_DIR's (or the user's cache directory).
#include <cstdint>
#include <iostream>
#include <span>
#include <vector>

#include <tunekit/tunekit.hpp>

struct Scale {  // out = 2 * in
  std::int64_t n = 0;
  std::vector<float> in, out;
};

Scale make_scale(std::int64_t n) {
  return Scale{n, std::vector<float>(std::size_t(n), 1.5f), std::vector<float>(std::size_t(n))};
}

int main() {
  tunekit::Op<Scale> scale("consumer_scale", /*schema=*/1);
  scale.key({"n"}, [](const Scale& a) { return tunekit::KeyValues{a.n}; })
      .inputs([](const tunekit::Key& k) { return make_scale(k.integer("n")); })
      .outputs([](Scale& a) { return std::vector{tunekit::OutputView::of(std::span(a.out))}; })
      .reference([](Scale& a) {
        for (std::size_t i = 0; i < a.in.size(); ++i) a.out[i] = 2 * a.in[i];
      })
      .candidate("multiply",
                 [](Scale& a) {
                   for (std::size_t i = 0; i < a.in.size(); ++i) a.out[i] = 2 * a.in[i];
                 })
      .candidate("add",
                 [](Scale& a) {
                   for (std::size_t i = 0; i < a.in.size(); ++i) a.out[i] = a.in[i] + a.in[i];
                 })
      .default_candidate("multiply");

  tunekit::cpu::CpuDevice device;
  tunekit::Tuner tuner(device, tunekit::TunerOptions::from_environment());
  Scale args = make_scale(std::int64_t(1) << 16);
  tunekit::TuneReport report;
  const tunekit::Choice choice = tuner.select(scale, scale.key_of(args), &report);
  scale.call(choice.index, args);
  std::cout << "consumer_scale n=" << args.n << ": " << scale.candidate(choice.index).name << " ("
            << tunekit::to_string(choice.source) << ")\n";
  return args.out[0] == 3.0f ? 0 : 1;
}
