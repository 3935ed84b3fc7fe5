// Umbrella header.
#pragma once

#include "tunekit/candidate.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/device.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/report.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/stats.hpp"
#include "tunekit/timing.hpp"
#include "tunekit/tuner.hpp"
#include "tunekit/validate.hpp"
#include "tunekit/value.hpp"
