// Work models of the built-in CPU ops (DESIGN §9): what each candidate does on a key — flops,
// compulsory and re-read bytes, the block it re-reads, the threads and vector width it uses.
// The cost model ranks candidates from these without running them. Private to kernels/.
#pragma once

#include <optional>

#include "tunekit/candidate.hpp"
#include "tunekit/cost_model.hpp"
#include "tunekit/key.hpp"

namespace tunekit::kernels {

// Each reads the candidate's Config (the same parameters its run function was built from);
// nullopt for a config it does not know.
std::optional<Work> sgemm_work(const Key& key, const Candidate& candidate);
std::optional<Work> softmax_work(const Key& key, const Candidate& candidate);
std::optional<Work> rmsnorm_work(const Key& key, const Candidate& candidate);
std::optional<Work> sum_work(const Key& key, const Candidate& candidate);

}  // namespace tunekit::kernels
