// The replay backend (DESIGN §11): a simulated device that replays recorded measurements of a
// whole space (Kernel Tuner cache files, .json or .json.gz, and T4 results files). Measuring a
// configuration returns one of its recorded samples, charges the recorded compile + benchmark +
// verification time to a simulated clock, and fails where the recording failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/op.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/space.hpp"
#include "tunekit/value.hpp"

namespace tunekit {

struct RecordedResult {
  // ok; compile_failed (CompilationFailedConfig), launch_failed (RuntimeFailedConfig),
  // rejected (InvalidConfig), validation_failed (T4 "correctness").
  Status status = Status::ok;
  std::string failure;           // the recorded failure marker; empty when ok
  double time_ms = 0;            // the recorded objective (mean of times); 0 when failed
  std::vector<double> times_ms;  // the individual samples (may be empty for a failure)
  double compile_ms = 0;
  double benchmark_ms = 0;
  double verification_ms = 0;
  // What one evaluation of this config costs on the simulated clock.
  double charge_ms() const { return compile_ms + benchmark_ms + verification_ms; }
};

class Recording {
 public:
  enum class Format { kernel_tuner_cache, t4 };

  // Reads a Kernel Tuner cache file (.json or gzip-compressed, detected by content) or a T4
  // results file. A file that cannot be read or parsed is a UsageError naming the file.
  static Recording load(const std::filesystem::path& file);

  const std::string& source() const { return source_; }
  Format format() const { return format_; }
  const std::string& device_name() const { return device_name_; }
  const std::string& kernel_name() const { return kernel_name_; }
  // The Kernel Tuner problem size as recorded (an integer becomes one value; a T4 file has
  // none). Export writes it back; import makes the key from it.
  const std::vector<Value>& problem_size() const { return problem_size_; }
  // Exactly the recorded configurations (parameters in the file's order, values in the
  // file's tune_params order).
  const Enumeration& space() const { return space_; }
  // The recording of configuration `index` of space().
  const RecordedResult& result(std::size_t index) const { return results_.at(index); }
  std::size_t size() const { return results_.size(); }
  // Every configuration once, as indices into space(), in the order the file lists them (a
  // Kernel Tuner cache's `cache` keys, a T4 file's `results`): for a file Kernel Tuner or a
  // tunekit export wrote, the order the run evaluated them. The writers follow it. A recording
  // built without one lists its space in order.
  const std::vector<std::size_t>& order() const { return order_; }
  std::size_t valid_count() const;
  // The fastest recorded configuration (by recorded time); nullopt when none succeeded.
  std::optional<std::size_t> best() const;
  double optimum_ms() const;  // its time; a UsageError when none succeeded

  // Builds a recording from parts (tests, exporters). results[i] belongs to space.config(i);
  // `order` (a permutation of the space's indices; empty: 0, 1, 2, ...) becomes order(). A
  // result count that is not the space's size, or an order that is not a permutation, is a
  // UsageError.
  static Recording from_results(Enumeration space, std::vector<RecordedResult> results,
                                std::string device_name = {}, std::string kernel_name = {},
                                std::vector<Value> problem_size = {},
                                std::vector<std::size_t> order = {});

 private:
  std::string source_;
  Format format_ = Format::kernel_tuner_cache;
  std::string device_name_;
  std::string kernel_name_;
  std::vector<Value> problem_size_;
  Enumeration space_;
  std::vector<RecordedResult> results_;
  std::vector<std::size_t> order_;
};

struct ReplayMeasurement {
  Status status = Status::ok;
  std::string message;
  double time_ms = 0;      // a recorded sample when ok (drawn, seeded, from `times`)
  double recorded_ms = 0;  // the config's recorded `time` (the mean the file ranks by)
  double charged_ms = 0;   // added to the simulated clock
  bool ok() const { return status == Status::ok; }
};

// Replays one recording. Deterministic for a seed.
class ReplayBackend {
 public:
  ReplayBackend(const Recording& recording, std::uint64_t seed);

  const Recording& recording() const { return *recording_; }
  // One evaluation: a sample drawn (seeded) from the config's recorded `times` (the recorded
  // `time` when it has none), or the recorded failure.
  ReplayMeasurement measure(std::size_t index);
  // A config that was not recorded is `rejected` and charges nothing.
  ReplayMeasurement measure(const Config& config);
  double clock_ms() const { return clock_ms_; }

 private:
  const Recording* recording_;
  Rng rng_;
  double clock_ms_ = 0;
};

// The replay backend as a Device the Tuner can use (DESIGN §11). Candidate i of
// make_replay_op(recording) is configuration i of recording.space(). Time is simulated: prepare
// charges the config's recorded compile + verification time and fails as the recording failed;
// each launch advances the clock by one reading, so a timing window reads recorded kernel
// times, not anything this machine did. The simulated seconds are the cost a real tuning run
// of the same measurements would have had, not a prediction of any other run.
struct ReplayDeviceOptions {
  enum class Reading {
    sample,         // a recorded sample drawn (seeded) from the config's `times`
    recorded_time,  // the config's recorded `time` (the mean the file ranks by)
  };
  Reading reading = Reading::sample;
  std::uint64_t seed = 1;
  // Real seconds slept per simulated second of each recorded build and validation (0: none),
  // so a replayed search costs wall time in proportion to what it replays (shared searches'
  // workers, their benchmark).
  double pace = 0;
};

class ReplayDevice final : public Device {
 public:
  // The recording must outlive the device.
  explicit ReplayDevice(const Recording& recording, ReplayDeviceOptions options = {});
  ~ReplayDevice() override;

  const DeviceIdentity& identity() const override { return identity_; }
  Clock& clock() override;
  std::unique_ptr<Trial> make_trial(Workload& workload, std::size_t index) override;
  // One simulated timeline: builds are charged one after the other.
  bool parallel_builds() const override { return false; }
  // The simulated clock lives in this process: a worker's charges would be lost.
  Workers workers() const override { return Workers::unsupported; }

  const Recording& recording() const { return *recording_; }
  // Simulated seconds charged so far (prepares and launches).
  double simulated_seconds() const { return now_seconds_; }
  long long launches() const { return launches_; }

 private:
  class SimulatedClock;
  class ReplayTrial;
  // Adds a build's or a validation's recorded seconds (and sleeps them at options' pace).
  void charge_preparation(double seconds);
  double reading(std::size_t index);

  const Recording* recording_;
  ReplayDeviceOptions options_;
  DeviceIdentity identity_;
  Rng rng_;
  double now_seconds_ = 0;
  long long launches_ = 0;
  std::vector<bool> built_;     // compile charged
  std::vector<bool> verified_;  // verification charged
  std::unique_ptr<SimulatedClock> clock_;
};

// The op name and key a recording stands for: "kt:<kernel_name>" ("kt:unnamed" without one),
// and the problem size as x, y, z (then d3, d4, ...; empty without one).
std::string recording_op_name(const Recording& recording);
Key recording_key(const Recording& recording);

// An op whose candidates are the recording's configurations (a space op over the recording's
// points, named by their Config text), to be tuned on a ReplayDevice of the same recording. Its
// default is the first configuration that was recorded as valid (UsageError when none was). Its key
// is recording_key(recording); inputs are a one-element output every candidate writes, so the
// tuner's validation passes wherever the recording did not fail.
std::unique_ptr<OpBase> make_replay_op(const Recording& recording);

}  // namespace tunekit
