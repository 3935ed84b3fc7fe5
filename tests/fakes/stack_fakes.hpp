// Fakes for the stack controller: a workspace of float outputs that counts what validation
// reads, and a trial runner whose seconds are scripted (the candidate still runs, so outputs
// validate and a candidate's own hooks fire).
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "tunekit/stack.hpp"

namespace tunekit::fakes {

class FloatWorkspace : public stack::Workspace {
 public:
  explicit FloatWorkspace(std::size_t n, float input = 1.0f) : in(n, input), out(n, 0.0f) {}
  std::vector<float> in;
  std::vector<float> out;
  std::size_t largest_read = 0;  // most positions one read() asked for
  std::size_t reads = 0;
  int runs = 0;  // candidates run on it (a fresh workspace has 0)

  std::vector<OutputView> outputs() override { return {OutputView::of(std::span<float>(out))}; }
  std::vector<double> read(std::span<const std::uint64_t> positions) override {
    ++reads;
    largest_read = std::max(largest_read, positions.size());
    return stack::Workspace::read(positions);
  }
};

// A candidate computing out = in * 2 (counting its runs), then `tweak` (to make it wrong on
// purpose).
inline stack::StackCandidate doubling(std::string name,
                                      std::function<void(FloatWorkspace&)> tweak = {}) {
  stack::StackCandidate c;
  c.name = std::move(name);
  c.run = stack::run_on<FloatWorkspace>([tweak](FloatWorkspace& w, std::span<std::byte>) {
    ++w.runs;
    for (std::size_t i = 0; i < w.in.size(); ++i) w.out[i] = w.in[i] * 2;
    if (tweak) tweak(w);
  });
  return c;
}

class ScriptedTrialRunner final : public stack::TrialRunner {
 public:
  // Seconds of the n-th trial (0-based, per candidate) of the named candidate.
  std::function<double(const std::string& name, int n)> seconds = [](const std::string&, int) {
    return 1.0;
  };
  // Called inside every trial before the candidate runs (the trial is in progress).
  std::function<void(const std::string& name)> on_trial;

  stack::TrialResult run(const stack::Problem& problem,
                         const stack::StackCandidate& candidate) override {
    int n = 0;
    {
      std::lock_guard lock(mutex_);
      n = counts_[candidate.name]++;
      order_.push_back(candidate.name);
    }
    if (on_trial) on_trial(candidate.name);
    stack::TrialResult r = host_->run(problem, candidate);
    if (r.ok()) r.seconds = seconds(candidate.name, n);
    return r;
  }
  int trials(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = counts_.find(name);
    return it == counts_.end() ? 0 : it->second;
  }
  int total() const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(order_.size());
  }
  std::vector<std::string> order() const {
    std::lock_guard lock(mutex_);
    return order_;
  }

 private:
  std::unique_ptr<stack::TrialRunner> host_ = stack::host_trial_runner();
  mutable std::mutex mutex_;
  std::map<std::string, int> counts_;
  std::vector<std::string> order_;
};

}  // namespace tunekit::fakes
