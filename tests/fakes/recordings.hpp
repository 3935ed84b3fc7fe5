// The recorded GPU spaces the replay tests share, loaded once per test process: parsing the
// file dominates these tests under sanitizers.
#pragma once

#include "fakes/datasets.hpp"
#include "tunekit/replay.hpp"

namespace tunekit::testing {

inline const Recording& convolution_a100() {
  static const Recording r = Recording::load(datasets() / "convolution_milo/A100.json.gz");
  return r;
}

}  // namespace tunekit::testing
