// Record now, tune later (DESIGN §7): the misses a store recorded (mode cached, or
// TunerOptions::persist.record_misses) are tuned offline on this machine with the ops' input
// generators; `tunekit tune --pending` is this call.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner_options.hpp"

namespace tunekit {

// What became of one pending record. Only `tuned` removes the record from the store: every
// other status keeps it, so nothing recorded is silently dropped.
enum class PendingStatus {
  tuned,               // searched, the winner stored for the record's identity; record removed
  other_device,        // recorded on another device (this one cannot tune it); kept
  unknown_op,          // the op finder does not know the op (renamed, removed, not built); kept
  bad_key,             // the key does not parse under the op's key schema any more; kept
  candidates_changed,  // the op's candidate set (or what "correct" means) changed; kept
  bad_record,          // the record's environment or numerics policy is unreadable; kept
  not_stored,          // searched, but nothing was stored (no measured winner, the device was
                       // busy, the store not writable...): see the report; kept
};
std::string_view to_string(PendingStatus status);

struct PendingOutcome {
  PendingMiss miss;  // the record as the store held it
  PendingStatus status = PendingStatus::tuned;
  std::string why;    // for every status but tuned: what and why, in words
  TuneReport report;  // the search (tuned, not_stored)
  bool kept() const { return status != PendingStatus::tuned; }
  // Kept for a reason this machine can act on: everything but other_device.
  bool failed() const { return kept() && status != PendingStatus::other_device; }
};

// The op of a recorded name, built for the device being tuned (nullptr: not known). The
// pointer must stay valid until tune_pending returns.
using PendingOpFinder = std::function<const OpBase*(std::string_view op_name)>;

struct PendingTuning {
  std::string op;  // only this op's records (empty: every op)
  // Told of each record once it is settled, in the order tuned (oldest record first).
  std::function<void(const PendingOutcome&)> on_outcome;
};

// Tunes every pending miss of `options.persist.store` that was recorded on `device`: for each
// record, oldest first, finds its op, parses its key (the op's schema), sets the record's
// environment tags and numerics policy (one Tuner per distinct pair, built from `options`), checks
// the candidate-set checksum, searches (Tuner::tune: whatever the mode), and removes the record
// once the store holds the winner. Records this call cannot tune are kept and reported with
// the reason. A store that is "none" or cannot be opened is a UsageError saying so; fatal
// errors of a search propagate (records not yet reached stay pending).
std::vector<PendingOutcome> tune_pending(Device& device, const TunerOptions& options,
                                         const PendingOpFinder& find_op,
                                         const PendingTuning& tuning = {});

}  // namespace tunekit
