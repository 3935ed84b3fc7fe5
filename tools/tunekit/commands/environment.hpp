// The tool's one reading of the environment for commands that take no mode from it.
#pragma once

#include "tunekit/tuner.hpp"

namespace tunekit::cli {

// TunerOptions from the environment with TUNEKIT_MODE left unread: for commands that never
// use the mode (calibrate, explain) or take it from --mode, so a bad value there cannot stop
// them.
TunerOptions options_ignoring_mode();

// Spawned trial workers (OpenCL/CUDA trials under --isolation worker) run this executable as
// `tunekit trial-worker`, unless TUNEKIT_WORKER_PROGRAM named another.
void use_own_program_for_workers(TunerOptions& options);

}  // namespace tunekit::cli
