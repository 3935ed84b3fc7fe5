// ReplayDevice: the replay backend behind the Device seam, and the op over a recording's
// configurations (include/tunekit/replay.hpp).
#include <chrono>
#include <thread>
#include <utility>

#include "tunekit/errors.hpp"
#include "tunekit/replay.hpp"

namespace tunekit {

// Reads the device's simulated time: a window is the readings launched inside it.
class ReplayDevice::SimulatedClock final : public Clock {
 public:
  std::string_view name() const override { return "replay (simulated)"; }
  void begin() override { window = 0; }
  double end() override { return window; }
  // The readings launched since begin(), summed apart from the device's total so that a
  // window reads the recorded values exactly.
  double window = 0;
};

class ReplayDevice::ReplayTrial final : public Trial {
 public:
  ReplayTrial(ReplayDevice& device, Workload& workload, std::size_t index)
      : device_(device), workload_(workload), index_(index) {}
  // The compile pass charges the recorded compile time; a recorded compile failure fails here.
  Outcome build() override {
    const RecordedResult& r = device_.recording().result(index_);
    if (device_.built_.at(index_)) return Outcome::success();
    device_.built_[index_] = true;
    device_.charge_preparation(r.compile_ms / 1000.0);
    if (r.status == Status::compile_failed) return {r.status, "recorded as " + r.failure};
    return Outcome::success();
  }
  // The first prepare charges the recorded verification (and a compile, when build() was not
  // called); preparing again (racing re-prepares for each window) costs nothing.
  Outcome prepare() override {
    const RecordedResult& r = device_.recording().result(index_);
    if (Outcome b = build(); !b.ok()) return b;
    if (!device_.verified_.at(index_)) {
      device_.verified_[index_] = true;
      device_.charge_preparation(r.verification_ms / 1000.0);
    }
    if (r.status != Status::ok) return {r.status, "recorded as " + r.failure};
    return Outcome::success();
  }
  void launch() override {
    workload_.run_candidate(index_);
    const double s = device_.reading(index_);
    device_.now_seconds_ += s;
    device_.clock_->window += s;
    ++device_.launches_;
  }
  void sync() override {}
  void release() override {}

 private:
  ReplayDevice& device_;
  Workload& workload_;
  std::size_t index_;
};

ReplayDevice::ReplayDevice(const Recording& recording, ReplayDeviceOptions options)
    : recording_(&recording),
      options_(options),
      rng_(options.seed),
      built_(recording.size(), false),
      verified_(recording.size(), false),
      clock_(std::make_unique<SimulatedClock>()) {
  identity_.backend = "replay";
  identity_.product =
      recording.device_name().empty() ? "unnamed recorded device" : recording.device_name();
  identity_.driver = "recording " + recording.source();
  identity_.known = true;
}

ReplayDevice::~ReplayDevice() = default;

void ReplayDevice::charge_preparation(double seconds) {
  now_seconds_ += seconds;
  if (options_.pace > 0 && seconds > 0)
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds * options_.pace));
}

Clock& ReplayDevice::clock() {
  return *clock_;
}

std::unique_ptr<Trial> ReplayDevice::make_trial(Workload& workload, std::size_t index) {
  if (index >= recording_->size())
    throw UsageError("candidate " + std::to_string(index) + " is not a configuration of " +
                     recording_->source() + ": use make_replay_op with the same recording");
  return std::make_unique<ReplayTrial>(*this, workload, index);
}

double ReplayDevice::reading(std::size_t index) {
  const RecordedResult& r = recording_->result(index);
  if (options_.reading == ReplayDeviceOptions::Reading::recorded_time || r.times_ms.empty())
    return r.time_ms / 1000.0;
  std::uniform_int_distribution<std::size_t> pick(0, r.times_ms.size() - 1);
  return r.times_ms[pick(rng_)] / 1000.0;
}

std::string recording_op_name(const Recording& recording) {
  return "kt:" +
         (recording.kernel_name().empty() ? std::string("unnamed") : recording.kernel_name());
}

Key recording_key(const Recording& recording) {
  static const char* const axes[] = {"x", "y", "z"};
  std::vector<Field> fields;
  const std::vector<Value>& size = recording.problem_size();
  for (std::size_t i = 0; i < size.size(); ++i)
    fields.push_back({i < 3 ? std::string(axes[i]) : "d" + std::to_string(i), size[i]});
  return Key(std::move(fields));
}

namespace {

struct ReplayArgs {
  std::vector<float> out = std::vector<float>(1, 0.0f);
};

}  // namespace

std::unique_ptr<OpBase> make_replay_op(const Recording& recording) {
  std::optional<std::size_t> first_valid;
  for (std::size_t i = 0; i < recording.size() && !first_valid; ++i)
    if (recording.result(i).status == Status::ok) first_valid = i;
  if (!first_valid)
    throw UsageError("the recording " + recording.source() +
                     " has no valid configuration: there is nothing to tune");
  auto op = std::make_unique<Op<ReplayArgs>>(recording_op_name(recording), 1);
  const Key key = recording_key(recording);
  op->describe("replay of " + recording.source())
      .key([key](const ReplayArgs&) { return key; })
      .inputs([](const Key&) { return ReplayArgs{}; })
      .outputs([](ReplayArgs& a) { return std::vector<OutputView>{OutputView::of(a.out)}; })
      .reference([](ReplayArgs& a) { a.out[0] = 1.0f; })
      // The recording's own points, so strategies see its parameters and neighbourhoods.
      .space(recording.space(),
             [](const Config&) { return [](ReplayArgs& a) { a.out[0] = 1.0f; }; })
      .default_config(recording.space().config(*first_valid));
  return op;
}

}  // namespace tunekit
