// The cost model's decision for one (op, key) (DESIGN §7, §9): admission shared with the
// searches, scores from the op's work model, the advisory rules. Pure: nothing is run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/cost_model.hpp"
#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/op.hpp"
#include "tunekit/tuner_options.hpp"

namespace tunekit::detail {

struct EnvelopeSource {
  std::optional<Envelope> envelope;
  std::string origin;  // "options", "profile FILE", "stored profile FILE"; empty: none
};

// The envelope the options name for `device`: options.model.envelope, else the
// options.model.profile file (UsageError when it is missing or malformed), else the stored profile
// of the device under options.model.profile_dir when it exists (a malformed one is reported through
// `warn` and ignored).
EnvelopeSource resolve_envelope(const TunerOptions& options, const DeviceIdentity& device);

// Scores every candidate and decides. The report's source is `model` when the model decided,
// `use_default` (with the reason) when it declined.
ModelReport model_decide(const OpBase& op, const Key& key, const EnvelopeSource& envelope,
                         const TunerOptions& options);

}  // namespace tunekit::detail
