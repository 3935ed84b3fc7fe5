// A worker process for the tuning lease tests (src/tuner/tuning_lease_hold.cpp): `selects`
// seeded random selects over keys n=1..KEYS (KEYS "=N": key n=N only) of a fake op, on the store
// SPEC, with tuning leases of TTL seconds and no device lock (so the leases alone keep two
// processes off one key). With HOLD_MS > 0 each search blocks that long in its first launch (the
// lease is renewed meanwhile), after creating the file READY (when given). With WAIT > 0 a busy
// lease is waited for that many seconds. Prints one line per select: "<n> <source>".
//   lease_worker SPEC KEYS SELECTS SEED TTL WAIT HOLD_MS [READY]
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include "fakes/fake_device.hpp"
#include "tunekit/tuner.hpp"

int main(int argc, char** argv) {
  if (argc != 8 && argc != 9) {
    std::cerr << "usage: lease_worker SPEC KEYS SELECTS SEED TTL WAIT HOLD_MS [READY]\n";
    return 2;
  }
  const std::string keys_arg = argv[2];
  const bool one_key = !keys_arg.empty() && keys_arg[0] == '=';
  const int keys = std::atoi(keys_arg.c_str() + (one_key ? 1 : 0));
  const int selects = std::atoi(argv[3]);
  const int hold_ms = std::atoi(argv[7]);
  const std::string ready = argc == 9 ? argv[8] : "";
  tunekit::fakes::FakeDevice device;
  device.behaviour["def"].seconds = 2e-3;
  device.behaviour["fast"].seconds = 1e-3;
  bool held = false;
  if (hold_ms > 0) {
    device.behaviour["def"].hook = [&] {
      if (held) return;
      held = true;
      if (!ready.empty()) std::ofstream(ready) << "1";
      std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    };
  }
  auto op = tunekit::fakes::make_fake_op(device, {"def", "fast"}, "def");
  tunekit::TunerOptions options;
  options.persist.store = argv[1];
  options.persist.lock_dir = "none";
  options.persist.lease_ttl_seconds = std::atof(argv[5]);
  options.persist.wait_for_device_seconds = std::atof(argv[6]);
  // A holder "of another host" (LEASE_WORKER_HOLDER): its lease, once it is killed, can only
  // expire; one of this host is taken over as soon as it is gone.
  if (const char* holder = std::getenv("LEASE_WORKER_HOLDER"))
    options.persist.lease_holder = holder;
  options.hooks.log = tunekit::Log::warnings_to([](std::string_view m) { std::cerr << m << '\n'; });
  tunekit::Tuner tuner(device, options);
  std::mt19937 rng(static_cast<unsigned>(std::atoi(argv[4])));
  std::uniform_int_distribution<int> pick(1, keys);
  for (int i = 0; i < selects; ++i) {
    const int n = one_key ? keys : pick(rng);
    tunekit::TuneReport report;
    held = false;
    tuner.select(*op, tunekit::Key{{"n", n}}, &report);
    std::cout << n << ' ' << to_string(report.source) << '\n';
  }
  return 0;
}
