#include "tuner/choice_source.hpp"

namespace tunekit::detail {

void add_reason(TuneReport& report, std::string_view more) {
  if (more.empty()) return;
  if (!report.reason.empty()) report.reason += "; ";
  report.reason += more;
}

void append_stale(ServeRequest& request, std::string_view more) {
  if (!request.stale.empty()) request.stale += "; ";
  request.stale += more;
}

bool transient(Status status) {
  return status == Status::timed_out || status == Status::out_of_memory ||
         status == Status::refused || status == Status::stopped;
}

bool store_bans(Store& store, const std::string& identity_digest, std::string_view candidate) {
  for (const BannedCandidate& b : store.bans(identity_digest))
    if (b.candidate == candidate) return true;
  return false;
}

void fill_identity(TuneReport& r, const OpBase& op, const Key& key, const DeviceIdentity& device,
                   const TunerOptions& options) {
  r.op = op.name();
  r.op_checksum = op.checksum().hex();
  r.key = key.text();
  r.key_digest = key.digest().hex();
  r.device = device.product;
  r.statistic = options.decide.statistic;
  r.tie_band = options.decide.tie_band;
  r.numerics_policy = options.decide.numerics_policy;
}

TuneReport brief_report(const OpBase& op, const Key& key, const DeviceIdentity& device,
                        const TunerOptions& options, std::size_t index, Source source,
                        std::string reason) {
  TuneReport r;
  fill_identity(r, op, key, device, options);
  r.source = source;
  r.reason = std::move(reason);
  r.winner = index;
  r.winner_name = op.candidate(index).name;
  r.default_index = op.default_index(key);
  r.default_name = op.candidate(r.default_index).name;
  r.space_size = op.size();
  return r;
}

}  // namespace tunekit::detail
