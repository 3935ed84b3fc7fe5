// Interop with Kernel Tuner and T4 (DESIGN §8 "Interop"): a Kernel Tuner cache file imported as
// stored evidence, and a tuning run (a TuneReport, or a strategy's history over a recording)
// exported as a Kernel Tuner cache file or a T4 results file. The interchange value is a
// Recording (tunekit/replay.hpp); docs/formats.md describes both files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/identity.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

// A recording as a stored choice: op recording_op_name(), key recording_key(), device backend
// "kt" with the file's device name as product, candidate set = the recorded configurations,
// winner = the fastest valid one, evidence = every configuration (time, samples, or its
// classified failure). A recording with no valid configuration is a UsageError (nothing to
// store).
struct ImportedRecording {
  Identity identity;
  StoredChoice choice;
  std::size_t configurations = 0;
  std::size_t valid = 0;
  std::size_t best = 0;  // index into the recording's space
  double best_ms = 0;
};
ImportedRecording import_recording(const Recording& recording,
                                   const Toolchain& toolchain = this_toolchain());

// A tuner report as a recording: every candidate that was measured or failed classified
// (skipped, stopped, hopeless and unmeasured candidates were not evaluated and are left out),
// in the report's order (the order the search evaluated them, the default first) as the
// recording's order(). Parameters are the candidates' configs when every candidate has the
// same parameter names, else one string parameter "candidate" holding the candidate name.
// Times are the candidate's samples in ms; the recorded time is its ranking score; the compile
// time its compile_seconds. kernel_name = the op, device_name = the report's device,
// problem_size = the key's values.
Recording recording_from_report(const TuneReport& report, const Key& key);

// The configurations a search evaluated, in the history's order (the recording's order()),
// each with what `source` recorded for it (samples, compile, benchmark and verification
// times): the export of a replay / strategy run.
Recording recording_from_history(const Recording& source, const History& history);

// The files, as text and written atomically (temporary file + rename; an existing file is
// replaced only by a complete one). Both list the configurations in recording.order() (for an
// export, the evaluation order): a Kernel Tuner cache's `cache` keys, a T4 file's `results`.
// Write errors are UsageErrors naming the file.
std::string kernel_tuner_cache_json(const Recording& recording);
std::string t4_results_json(const Recording& recording);
void write_kernel_tuner_cache(const std::filesystem::path& file, const Recording& recording);
void write_t4_results(const std::filesystem::path& file, const Recording& recording);

}  // namespace tunekit
