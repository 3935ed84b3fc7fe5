// A fake device whose kernels are slow and wrong on purpose: each candidate of a FakeOp has a
// scripted duration, and may write wrong output, throw at prepare or at launch.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fakes/scripted_clock.hpp"
#include "tunekit/device.hpp"
#include "tunekit/op.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::fakes {

struct FakeBehaviour {
  double seconds = 1e-3;          // reading for each launch
  double jitter = 0;              // relative, uniform in [-jitter, +jitter], seeded
  double waited = -1;             // Clock::waited_seconds of each reading (-1: cannot tell)
  bool wrong = false;             // writes a wrong value into one element
  bool nan = false;               // leaves one element unwritten (stays NaN after poisoning)
  int right_calls = 0;            // > 0: right this many launches, wrong on every one after
  bool throw_at_launch = false;   // throws std::runtime_error from the candidate
  bool throw_at_prepare = false;  // the trial's prepare throws
  std::function<void()> hook;     // runs inside every launch (e.g. to block or to re-enter)
};

class FakeDevice final : public Device {
 public:
  FakeDevice() {
    identity_.backend = "fake";
    identity_.product = "fake device";
    identity_.known = true;
    clock_.then = [this] { return reading(); };
    clock_.then_waited = [this] { return behaviour[running].waited; };
  }

  std::map<std::string, FakeBehaviour> behaviour;
  std::string running;                  // the candidate launched last
  std::map<std::string, int> launches;  // per candidate, every launch so far
  std::mt19937_64 rng{42};

  const DeviceIdentity& identity() const override { return identity_; }
  Clock& clock() override { return clock_; }
  ScriptedClock& scripted_clock() { return clock_; }

  std::unique_ptr<Trial> make_trial(Workload& workload, std::size_t index) override;
  // Trials: prepared so far, and alive now (made, not yet destroyed).
  int prepares = 0;
  int settles = 0;          // Device::settle calls (one before every timing window)
  double settle_reply = 0;  // what each settle says it waited (seconds)
  double settle(double) override {
    ++settles;
    return settle_reply;
  }
  // Scripted cross-CPU round trips (ns), one per Device::cross_cpu_round_trip call, in order;
  // none scripted (or all used): the device cannot tell.
  std::vector<double> round_trips;
  // When set, every reading instead (a placement that follows a test's clock).
  std::function<double()> round_trip;
  int round_trip_reads = 0;
  std::optional<double> cross_cpu_round_trip() override {
    ++round_trip_reads;
    if (round_trip) return round_trip();
    if (round_trips.empty()) return std::nullopt;
    const double ns = round_trips.front();
    round_trips.erase(round_trips.begin());
    return ns;
  }
  int trials_alive = 0;
  void set_candidate_names(std::vector<std::string> names) { names_ = std::move(names); }

 private:
  double reading() {
    const FakeBehaviour& b = behaviour[running];
    std::uniform_real_distribution<double> u(-b.jitter, b.jitter);
    return b.seconds * (1 + (b.jitter > 0 ? u(rng) : 0.0));
  }

  DeviceIdentity identity_;
  ScriptedClock clock_;
  std::vector<std::string> names_;
};

class FakeTrial final : public Trial {
 public:
  FakeTrial(FakeDevice& device, Workload& w, std::size_t index, bool throw_at_prepare)
      : device_(device), w_(w), index_(index), throw_at_prepare_(throw_at_prepare) {
    ++device_.trials_alive;
  }
  ~FakeTrial() override { --device_.trials_alive; }
  FakeTrial(const FakeTrial&) = delete;
  FakeTrial& operator=(const FakeTrial&) = delete;
  Outcome prepare() override {
    ++device_.prepares;
    if (throw_at_prepare_) throw std::runtime_error("fake: cannot prepare");
    return Outcome::success();
  }
  void launch() override { w_.run_candidate(index_); }
  void sync() override {}
  void release() override {}

 private:
  FakeDevice& device_;
  Workload& w_;
  std::size_t index_;
  bool throw_at_prepare_;
};

inline std::unique_ptr<Trial> FakeDevice::make_trial(Workload& workload, std::size_t index) {
  bool throws = index < names_.size() && behaviour[names_[index]].throw_at_prepare;
  return std::make_unique<FakeTrial>(*this, workload, index, throws);
}

// Arguments of the fake op: an output vector the candidates fill with 0, 1, 2, ...
struct FakeArgs {
  std::vector<float> out;
};

// An op whose candidates are driven by the device's behaviour table. The reference writes
// out[i] = i; a correct candidate does the same.
inline std::unique_ptr<Op<FakeArgs>> make_fake_op(FakeDevice& device,
                                                  const std::vector<std::string>& names,
                                                  std::string default_name,
                                                  std::atomic<int>* inputs_made = nullptr) {
  auto op = std::make_unique<Op<FakeArgs>>("fake", 1);
  op->key([](const FakeArgs& a) {
      return Key{{"n", static_cast<long>(a.out.size())}};
    })
      .inputs([inputs_made](const Key& k) {
        if (inputs_made) ++*inputs_made;
        return FakeArgs{std::vector<float>(static_cast<std::size_t>(k.integer("n")))};
      })
      .outputs([](FakeArgs& a) { return std::vector<OutputView>{OutputView::of(a.out)}; })
      .reference([](FakeArgs& a) {
        for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
      });
  for (const auto& name : names) {
    Candidate c;
    c.name = name;
    op->candidate(std::move(c), [&device, name](FakeArgs& a) {
      device.running = name;
      const int launch = ++device.launches[name];
      const FakeBehaviour& b = device.behaviour[name];
      if (b.hook) b.hook();
      if (b.throw_at_launch) throw std::runtime_error("fake: launch failed");
      for (std::size_t i = 0; i < a.out.size(); ++i) a.out[i] = static_cast<float>(i);
      const bool lies = b.right_calls > 0 && launch > b.right_calls;
      if ((b.wrong || lies) && !a.out.empty()) a.out[0] += 1;
      if (b.nan && !a.out.empty()) a.out[0] = std::numeric_limits<float>::quiet_NaN();
    });
  }
  op->default_candidate(std::move(default_name));
  device.set_candidate_names(names);
  return op;
}

}  // namespace tunekit::fakes
