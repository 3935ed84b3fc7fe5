// A worker process for the device lock tests (src/tuner/device_lock.cpp): tunes key n=N of a
// fake op into the store at STORE_PATH, whose device lock lives beside it. With a HOLD file,
// its search announces itself by creating HOLD.searching, then keeps the device (at most
// 60 s) until HOLD exists. Prints "<source> <workloads made> <reason>" on stdout.
//   device_lock_worker STORE_PATH N WAIT_SECONDS HOLD|-
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "fakes/fake_device.hpp"
#include "tunekit/tuner.hpp"

namespace {

// Blocks the first launch of the search until the test releases it (bounded: a test that
// fails must not leave a worker behind for good).
void hold_the_device(const std::string& hold) {
  std::ofstream(hold + ".searching") << "1";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(hold) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: device_lock_worker STORE_PATH N WAIT_SECONDS HOLD|-\n";
    return 2;
  }
  const std::string hold = argv[4];
  tunekit::fakes::FakeDevice device;
  device.behaviour["def"].seconds = 2e-3;
  device.behaviour["fast"].seconds = 1e-3;
  bool held = false;
  if (hold != "-") {
    device.behaviour["def"].hook = [&] {
      if (!held) hold_the_device(hold);
      held = true;
    };
  }
  std::atomic<int> searches{0};
  auto op = tunekit::fakes::make_fake_op(device, {"def", "fast"}, "def", &searches);
  tunekit::TunerOptions options;
  options.persist.store = std::string("sqlite:") + argv[1];
  options.persist.wait_for_device_seconds = std::atof(argv[3]);
  // The device lock alone is under test: a tuning lease would refuse the key before it
  // (lease_processes_test.cpp tests leases).
  options.persist.lease_ttl_seconds = 0;
  options.hooks.log = tunekit::Log::warnings_to([](std::string_view m) { std::cerr << m << '\n'; });
  tunekit::Tuner tuner(device, options);
  tunekit::TuneReport report;
  tuner.select(*op, tunekit::Key{{"n", std::atoi(argv[2])}}, &report);
  std::cout << to_string(report.source) << ' ' << searches.load() << ' ' << report.reason << '\n';
  return 0;
}
