// The chain a miss is served through (DESIGN §7): memory -> store -> artifact -> search |
// default. Each link is a ChoiceSource; the mode builds the chain. The first source with an
// answer serves; every source before it then records the answer, from the last to the first
// (an artifact is written before the store keeps the choice and the table publishes it, so a
// failed write publishes nothing).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/identity.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner_options.hpp"

namespace tunekit::detail {

struct ServeRequest {
  const OpBase& op;
  const Key& key;  // what the choice is stored under (a bucket's representative for a bucketed op)
  const Identity& identity;
  // Tuner::tune: search now, whatever the table, the store or the mode say.
  bool search_now = false;
  // Stored and artifact choices may answer (not under search_now or mode force).
  bool replay = true;
  // Filled by the source that answers.
  TuneReport report;
  // Set by a source that passed over a known choice that no longer validates (see
  // TuneReport::stale).
  std::string stale;
  // What the search holds while the choice is stored (a tuning lease, the device turn):
  // released when the request is done, after every source has recorded the answer, so a
  // process waiting for either finds the choice in the store once it gets them.
  std::vector<std::shared_ptr<void>> held;
};

struct Served {
  std::size_t index = 0;
  Source source = Source::use_default;
  bool measured = false;  // a clean measurement made now: it may be kept (DESIGN §7)
  bool publish = false;   // the table serves it for the rest of the session
};

class ChoiceSource {
 public:
  virtual ~ChoiceSource() = default;
  // The answer, or nullopt to ask the next source.
  virtual std::optional<Served> find(ServeRequest& request) = 0;
  // A later source answered: keep it where this source keeps choices. A throw stops the
  // recording (the sources before this one record nothing) and reaches the caller.
  virtual void record(ServeRequest& request, const Served& served) {
    (void)request;
    (void)served;
  }
};

// "; " between the parts of a report's reason.
void add_reason(TuneReport& report, std::string_view more);
// Adds to what the request passed over (ServeRequest::stale).
void append_stale(ServeRequest& request, std::string_view more);
// A failure that may be the machine's at the moment (a time or memory limit), not the
// candidate's: a replayed choice that meets it is passed over but not marked stale.
bool transient(Status status);
// Whether the store bans `candidate` for the identity.
bool store_bans(Store& store, const std::string& identity_digest, std::string_view candidate);

// The identity fields of a report (op, key, device, the decision's settings).
void fill_identity(TuneReport& report, const OpBase& op, const Key& key,
                   const DeviceIdentity& device, const TunerOptions& options);
// The report of an answer that searched nothing: candidate `index` from `source`.
TuneReport brief_report(const OpBase& op, const Key& key, const DeviceIdentity& device,
                        const TunerOptions& options, std::size_t index, Source source,
                        std::string reason);

}  // namespace tunekit::detail
