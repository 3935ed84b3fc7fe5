// A simulated device and an op over a parameter space, for tests of the search engine: every
// launch advances a simulated clock by the point's scripted time, every build takes a scripted
// time on the same clock (or really sleeps, to test overlap), and the device counts builds per
// point, builds seen inside a timing window, and live allocations.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/op.hpp"
#include "tunekit/space.hpp"

namespace tunekit::fakes {

class SimulatedDevice final : public Device {
 public:
  SimulatedDevice() {
    identity_.backend = "fake";
    identity_.product = "simulated device";
    identity_.known = true;
  }

  // What a point costs: seconds per launch, and its build's outcome.
  std::function<double(const Config&)> seconds = [](const Config&) { return 1e-3; };
  std::function<Outcome(const Config&)> build_outcome = [](const Config&) {
    return Outcome::success();
  };
  double build_seconds = 0;   // simulated seconds a build takes
  bool sleep_builds = false;  // builds also sleep build_seconds of real time
  bool parallel = true;
  bool builds_beyond_op = true;  // false: its trials build nothing the op does not (host trials)

  // Observations.
  std::map<std::string, int> builds;  // per config text
  int builds_in_window = 0;           // builds that happened while a timing window was open
  int launches = 0;
  int live = 0;  // trials prepared and not released
  int max_live = 0;
  std::atomic<int> building{0};
  std::atomic<int> max_building{0};
  std::vector<std::string> timed;  // configs whose windows opened, in order

  double now() const {
    std::lock_guard lock(mutex_);
    return now_;
  }
  std::function<double()> clock_fn() {
    return [this] { return now(); };
  }

  const DeviceIdentity& identity() const override { return identity_; }
  Clock& clock() override { return clock_; }
  bool parallel_builds() const override { return parallel; }
  bool trial_builds_beyond_op() const override { return builds_beyond_op; }
  std::unique_ptr<Trial> make_trial(Workload& workload, std::size_t index) override {
    return std::make_unique<SimTrial>(*this, workload, index);
  }

  // Called by the op's build step and by its candidates.
  Outcome build(const Config& config) {
    const int at_once = ++building;
    int seen = max_building.load();
    while (at_once > seen && !max_building.compare_exchange_weak(seen, at_once)) {
    }
    if (sleep_builds) std::this_thread::sleep_for(std::chrono::duration<double>(build_seconds));
    {
      std::lock_guard lock(mutex_);
      ++builds[config.text()];
      if (window_open_) ++builds_in_window;
      if (!sleep_builds) now_ += build_seconds;
    }
    --building;
    return build_outcome(config);
  }
  void run(const Config& config) {
    std::lock_guard lock(mutex_);
    now_ += seconds(config);
    ++launches;
    if (window_open_ && last_timed_ != config.text()) timed.push_back(last_timed_ = config.text());
  }

 private:
  class SimClock final : public Clock {
   public:
    explicit SimClock(SimulatedDevice& d) : d_(d) {}
    std::string_view name() const override { return "simulated"; }
    void begin() override {
      std::lock_guard lock(d_.mutex_);
      d_.window_open_ = true;
      start_ = d_.now_;
    }
    double end() override {
      std::lock_guard lock(d_.mutex_);
      d_.window_open_ = false;
      d_.last_timed_.clear();
      return d_.now_ - start_;
    }

   private:
    SimulatedDevice& d_;
    double start_ = 0;
  };

  class SimTrial final : public Trial {
   public:
    SimTrial(SimulatedDevice& d, Workload& w, std::size_t index) : d_(d), w_(w), index_(index) {}
    Outcome build() override { return w_.build_candidate(index_); }
    Outcome prepare() override {
      d_.max_live = std::max(d_.max_live, ++d_.live);
      prepared_ = true;
      return Outcome::success();
    }
    void launch() override { w_.run_candidate(index_); }
    void sync() override {}
    void release() override {
      if (prepared_) --d_.live;
      prepared_ = false;
    }
    ~SimTrial() override { release(); }

   private:
    SimulatedDevice& d_;
    Workload& w_;
    std::size_t index_;
    bool prepared_ = false;
  };

  DeviceIdentity identity_;
  mutable std::mutex mutex_;
  double now_ = 0;
  bool window_open_ = false;
  std::string last_timed_;
  SimClock clock_{*this};
};

struct SimArgs {
  std::vector<float> out = std::vector<float>(1, 0.0f);
};

// An op over `space` whose points run on `device`; `wrong` points write a wrong value. Host
// code: no build step (with device.builds_beyond_op false, building a candidate costs nothing,
// as on the CPU device).
inline std::unique_ptr<Op<SimArgs>> make_host_space_op(
    SimulatedDevice& device, Space space, Config default_config,
    std::function<bool(const Config&)> wrong = {}) {
  auto op = std::make_unique<Op<SimArgs>>("simulated", 1);
  op->inputs([](const Key&) { return SimArgs{}; })
      .outputs([](SimArgs& a) { return std::vector<OutputView>{OutputView::of(a.out)}; })
      .reference([](SimArgs& a) { a.out[0] = 1.0f; })
      .space(std::move(space),
             [&device, wrong](const Config& c) {
               const bool bad = wrong && wrong(c);
               return [&device, c, bad](SimArgs& a) {
                 device.run(c);
                 a.out[0] = bad ? 2.0f : 1.0f;
               };
             })
      .default_config(std::move(default_config));
  return op;
}

// A space op whose candidates are built (a runtime compilation: build_seconds each).
inline std::unique_ptr<Op<SimArgs>> make_space_op(SimulatedDevice& device, Space space,
                                                  Config default_config,
                                                  std::function<bool(const Config&)> wrong = {}) {
  auto op =
      make_host_space_op(device, std::move(space), std::move(default_config), std::move(wrong));
  op->build([&device](const Config& c) { return device.build(c); });
  return op;
}

// x and y in 0 .. n-1: n² points.
inline Space grid_space(int n) {
  std::vector<Value> values;
  for (int i = 0; i < n; ++i) values.emplace_back(static_cast<std::int64_t>(i));
  Space s;
  s.param("x", values).param("y", values);
  return s;
}

}  // namespace tunekit::fakes
