// Admission before anything runs: the numerics policy, then the candidate's eligibility for
// the key. Shared by every search (SearchContext::admit) and by the cost model's decisions
// (model_default, explain), so both admit exactly the same candidates.
#pragma once

#include <optional>

#include <string>

#include "tunekit/candidate.hpp"
#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::detail {

// nullopt when admitted; otherwise skipped (numerics), rejected (declined the key) or the
// classified failure of an eligibility check that threw.
std::optional<Outcome> precheck(const Candidate& candidate, const Key& key, Numerics policy);

// Why `key` cannot be tuned on `device` at all: its inputs and outputs (the compulsory bytes
// of the op's work model for the default candidate) exceed the device's memory, so making the
// inputs would end in bad_alloc or a swapping machine. Asked before any input is made.
// nullopt when it fits, when the op has no work model (or it cannot score the default, or it
// throws: the search classifies that later) and when the device's memory is unknown (0).
std::optional<std::string> working_set_refusal(const OpBase& op, const Key& key,
                                               const DeviceIdentity& device);

}  // namespace tunekit::detail
