// A clock whose readings are scripted: tests drive timing logic without real time.
#pragma once

#include <deque>
#include <functional>
#include <stdexcept>
#include <string_view>

#include "tunekit/device.hpp"

namespace tunekit::fakes {

class ScriptedClock final : public Clock {
 public:
  // Readings are taken from `script` first, then from `then` (when set).
  std::deque<double> script;
  std::function<double()> then;
  // Clock::waited_seconds of each reading, in order; once they run out, `then_waited` (when
  // set), else -1 (cannot tell).
  std::deque<double> waits;
  std::function<double()> then_waited;
  int begins = 0;
  int ends = 0;

  std::string_view name() const override { return "scripted"; }
  void begin() override { ++begins; }
  double waited_seconds() const override { return waited_; }
  double end() override {
    ++ends;
    waited_ = then_waited ? then_waited() : -1;
    if (!waits.empty()) {
      waited_ = waits.front();
      waits.pop_front();
    }
    if (!script.empty()) {
      double t = script.front();
      script.pop_front();
      return t;
    }
    if (then) return then();
    throw std::logic_error("ScriptedClock: the script ran out");
  }

 private:
  double waited_ = -1;
};

// A trial whose launches are counted (and can run a hook).
class CountingTrial final : public Trial {
 public:
  int launches = 0;
  int syncs = 0;
  std::function<void(int)> on_launch;  // receives the launch number (0-based)
  Outcome prepare() override { return Outcome::success(); }
  void launch() override {
    if (on_launch) on_launch(launches);
    ++launches;
  }
  void sync() override { ++syncs; }
  void release() override {}
};

}  // namespace tunekit::fakes
