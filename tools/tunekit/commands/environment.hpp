// The tool's one reading of the environment for commands that take no mode from it.
#pragma once

#include "tunekit/tuner.hpp"

namespace tunekit::cli {

// TunerOptions from the environment with TUNEKIT_MODE left unread: for commands that never
// use the mode (calibrate, explain) or take it from --mode, so a bad value there cannot stop
// them.
TunerOptions options_ignoring_mode();

}  // namespace tunekit::cli
