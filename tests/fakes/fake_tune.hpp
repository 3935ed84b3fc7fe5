// One tune of a fake op, as the tuner tests run it: the candidates `names` of the fake device
// ("def" the default), key n=4, anchored on `anchors`, through Tuner::select with `options`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fakes/fake_device.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::fakes {

inline TuneReport select_fake(FakeDevice& dev, const std::vector<std::string>& names,
                              const TunerOptions& options = {},
                              const std::vector<std::string>& anchors = {}) {
  auto op = make_fake_op(dev, names, "def");
  std::vector<Config> configs;
  for (const std::string& a : anchors) configs.push_back(Config{{"candidate", a}});
  if (!configs.empty()) op->anchors(std::move(configs));
  TuneReport r;
  Tuner(dev, options).select(*op, Key{{"n", 4}}, &r);
  return r;
}

}  // namespace tunekit::fakes
