// A worker process for the multi-process store tests: tunes keys [first, first+count) of a
// fake op into the store at argv[1], then reads every one of them back. Prints every warning
// on stderr; exits 0 when all keys were searched or replayed, 1 otherwise.
//   store_worker STORE_PATH FIRST COUNT [LOOPS]
#include <cstdlib>
#include <iostream>
#include <string>

#include "fakes/fake_device.hpp"
#include "tunekit/tuner.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: store_worker STORE_PATH FIRST COUNT [LOOPS]\n";
    return 2;
  }
  const std::string path = argv[1];
  const int first = std::atoi(argv[2]);
  const int count = std::atoi(argv[3]);
  const int loops = argc > 4 ? std::atoi(argv[4]) : 1;
  tunekit::fakes::FakeDevice device;
  device.behaviour["def"].seconds = 2e-3;
  device.behaviour["fast"].seconds = 1e-3;
  auto op = tunekit::fakes::make_fake_op(device, {"def", "fast"}, "def");
  int warnings = 0;
  for (int loop = 0; loop < loops; ++loop) {
    tunekit::TunerOptions options;
    options.persist.store = "sqlite:" + path;
    options.decide.mode = loop % 2 ? tunekit::Mode::force : tunekit::Mode::tune;
    // The store is under test: processes search (and write) at once, unlocked by the device
    options.persist.lock_dir = "none";
    options.persist.lease_ttl_seconds = 0;  // nor by tuning leases (lease_processes_test.cpp)
    options.hooks.log = tunekit::Log::warnings_to([&](std::string_view m) {
      ++warnings;
      std::cerr << m << '\n';
    });
    tunekit::Tuner tuner(device, options);
    if (!tuner.store()) return 1;
    for (int n = first; n < first + count; ++n) {
      auto choice = tuner.select(*op, tunekit::Key{{"n", n}});
      if (op->candidate(choice.index).name != "fast") {
        std::cerr << "key n=" << n << ": wrong winner\n";
        return 1;
      }
    }
  }
  // Everything this worker wrote must be readable by a fresh tuner in cached mode.
  tunekit::TunerOptions cached;
  cached.persist.store = "sqlite:" + path;
  cached.decide.mode = tunekit::Mode::cached;
  tunekit::Tuner reader(device, cached);
  for (int n = first; n < first + count; ++n) {
    if (reader.select(*op, tunekit::Key{{"n", n}}).source != tunekit::Source::cache_replay) {
      std::cerr << "key n=" << n << " was not in the store\n";
      return 1;
    }
  }
  return warnings == 0 ? 0 : 1;
}
