#include "tuner/search_source.hpp"

#include <filesystem>

#include "tuner/device_lock.hpp"
#include "tuner/device_turn.hpp"
#include "tuner/search.hpp"

namespace tunekit::detail {

std::optional<Served> SearchSource::find(ServeRequest& request) {
  const OpBase& op = request.op;
  const DeviceIdentity& device = device_.identity();
  // One search at a time per device, held until the winner is stored (DESIGN §11).
  DeviceTurn turn(device_, lock_path(), options_.persist.wait_for_device_seconds);
  if (!turn.warning().empty() && !lock_warned_.exchange(true))
    options_.hooks.log.warn(turn.warning());
  if (!turn.granted()) {
    const std::size_t fallback = op.default_index(request.key);
    request.report = brief_report(op, request.key, device, options_, fallback, Source::use_default,
                                  turn.refusal());
    record_miss(request);
    return Served{fallback, Source::use_default, false, false};
  }
  // The process we waited for may have tuned this very key.
  if (request.replay && turn.waited()) {
    if (auto known = reread_.find(request)) return known;
  }
  return searched(request);
}

Served SearchSource::searched(ServeRequest& request) {
  const OpBase& op = request.op;
  const DeviceIdentity& device = device_.identity();
  TuneReport r =
      run_search(device_, op, request.key, options_, prior_(op, request.key), banned(request));
  fill_identity(r, op, request.key, device, options_);
  const CandidateReport* winner = r.find(r.winner);
  const bool clean = r.source == Source::searched && winner && winner->outcome.ok();
  if (!clean)
    add_reason(r, "no clean measurement: kept in memory for this session only");
  else if (!device.known)
    add_reason(r, "device identity unknown: kept in memory for this session only");
  Served served{r.winner, r.source, clean && device.known, true};
  request.report = std::move(r);
  if (!served.measured) record_miss(request);
  return served;
}

void SearchSource::record_miss(const ServeRequest& request) {
  if (options_.persist.record_misses && store_ && device_.identity().known)
    store_->record_miss(make_pending_miss(request.identity));
}

std::map<std::size_t, std::string> SearchSource::banned(const ServeRequest& request) const {
  std::map<std::size_t, std::string> out = bans_.of(request.op.checksum(), request.key.digest());
  if (!store_ || !device_.identity().known) return out;
  for (const BannedCandidate& b : store_->bans(request.identity.digest().hex())) {
    if (auto index = request.op.find(b.candidate))
      out.emplace(*index, b.reason + " (banned in the store " + store_->describe() + ")");
  }
  // The default is the floor every search measures: a live failure of it propagates, and a
  // ban of it would leave nothing to fall back on.
  out.erase(request.op.default_index(request.key));
  return out;
}

std::string SearchSource::lock_path() const {
  std::string dir = options_.persist.lock_dir;
  if (dir == "none") return "";
  if (dir.empty()) {
    // Beside a store file; a server store (or none) has no directory to lock in.
    const std::string file = store_file_of(options_.persist.store);
    if (file.empty()) return "";
    dir = (std::filesystem::path(file).parent_path() / "locks").string();
  }
  return DeviceLock::path_for(dir, device_.identity());
}

}  // namespace tunekit::detail
