// What the tuner says about an answer it found (not a table hit: those are silent).
#pragma once

#include "tunekit/log.hpp"
#include "tunekit/report.hpp"

namespace tunekit::detail {

// info: a search's result (winner, speed-up, how many candidates, strategy and seed, budget
// cut) or where a choice came from (store, artifact, model, default and why); debug: each
// searched candidate's outcome and score.
void log_answer(const Log& log, const TuneReport& report);

}  // namespace tunekit::detail
