#include "tuner/search_source.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "tuner/device_lock.hpp"
#include "tuner/device_turn.hpp"
#include "tuner/search.hpp"
#include "tuner/tuning_lease_hold.hpp"

namespace tunekit::detail {

namespace {
// One lease holder name per search source (per Tuner) in this process.
std::atomic<std::uint64_t> search_sources_made{0};
}  // namespace

SearchSource::SearchSource(Device& device, const TunerOptions& options, Store* store,
                           ChoiceSource& reread, const LiveBans& bans,
                           std::function<SearchPrior(const OpBase&, const Key&)> prior)
    : device_(device),
      options_(options),
      store_(store),
      reread_(reread),
      bans_(bans),
      prior_(std::move(prior)),
      holder_number_(++search_sources_made) {}

std::optional<Served> SearchSource::find(ServeRequest& request) {
  // One tuner per identity across the processes sharing the store (a tuning lease), then one
  // search at a time per device (DESIGN §11); both held until the winner is stored.
  LeaseAnswer lease = take_lease(request);
  if (lease.landed) return lease.landed;
  if (!lease.refusal.empty()) return refused(request, lease.refusal);
  // One wait in all: the device turn gets what the lease's wait left.
  auto turn = std::make_shared<DeviceTurn>(
      device_, lock_path(),
      std::max(0.0, options_.persist.wait_for_device_seconds - lease.waited_seconds));
  if (!turn->warning().empty() && !lock_warned_.exchange(true))
    options_.hooks.log.warn(turn->warning());
  if (!turn->granted()) return refused(request, turn->refusal());
  // The process we waited for may have tuned this very key.
  if (request.replay && turn->waited()) {
    if (auto known = reread_.find(request)) return known;
  }
  request.held.push_back(turn);  // until the winner is stored
  return searched(request);
}

Served SearchSource::refused(ServeRequest& request, const std::string& why) {
  const std::size_t fallback = request.op.default_index(request.key);
  request.report = brief_report(request.op, request.key, device_.identity(), options_, fallback,
                                Source::use_default, why);
  record_miss(request);
  return Served{fallback, Source::use_default, false, false};
}

// Takes the identity's lease, or waits (persist.wait_for_device_seconds) for the holder's
// choice to land in the store or its lease to end. A lease taken is kept in the request.
SearchSource::LeaseAnswer SearchSource::take_lease(ServeRequest& request) {
  LeaseAnswer answer;
  const double ttl_s = options_.persist.lease_ttl_seconds;
  if (!store_ || !device_.identity().known || ttl_s <= 0) return answer;
  const auto ttl = std::chrono::milliseconds(static_cast<std::int64_t>(ttl_s * 1000.0 + 0.5));
  TuningLease wanted;
  wanted.identity_digest = request.identity.digest().hex();
  wanted.op = request.op.name();
  wanted.key = request.key.text();
  // Named now, not when the Tuner was made: a process forked from it is another holder.
  wanted.holder = options_.persist.lease_holder.empty() ? lease_holder_name(holder_number_)
                                                        : options_.persist.lease_holder;
  auto hold = std::make_shared<TuningLeaseHold>(*store_, wanted, ttl, options_.hooks.log);
  using Steady = std::chrono::steady_clock;
  const double wait_s = options_.persist.wait_for_device_seconds;
  const auto start = Steady::now();
  // At most a year: a larger wait would overflow the clock's ticks.
  const auto deadline = start + std::chrono::duration_cast<Steady::duration>(
                                    std::chrono::duration<double>(std::min(wait_s, 3.2e7)));
  // A poll often enough to serve the holder's choice soon after it lands, rarely enough not
  // to load a server store.
  const auto poll =
      std::clamp(ttl / 10, std::chrono::milliseconds(20), std::chrono::milliseconds(250));
  while (hold->taking().state == LeaseState::busy && Steady::now() < deadline) {
    std::this_thread::sleep_for(std::min<Steady::duration>(poll, deadline - Steady::now()));
    if (request.replay) {
      const std::string stale = request.stale;  // each poll would append its finding again
      if ((answer.landed = reread_.find(request))) return answer;
      request.stale = stale;
    }
    hold->take();
  }
  const LeaseTaking& taking = hold->taking();
  answer.waited_seconds = std::chrono::duration<double>(Steady::now() - start).count();
  if (taking.state == LeaseState::busy) {
    answer.refusal =
        lease_refusal(taking.current, store_->now_ms(), wait_s > 0 ? answer.waited_seconds : 0.0);
    return answer;
  }
  if (taking.state == LeaseState::unavailable) {
    // Said once, as information: the store has warned already of what makes it unable to
    // answer (a server away, a read-only file, a lock waited out).
    if (!lease_warned_.exchange(true))
      options_.hooks.log.info("tuning leases not used (" + taking.why +
                              "): searching without excluding other processes");
    return answer;
  }
  request.held.push_back(hold);
  // The previous holder may have stored this very key just before releasing its lease.
  if (request.replay) answer.landed = reread_.find(request);
  return answer;
}

Served SearchSource::searched(ServeRequest& request) {
  const OpBase& op = request.op;
  const DeviceIdentity& device = device_.identity();
  std::optional<SharedRun> shared;
  if (WorkQueue* queue = work_queue()) {
    shared = SharedRun{queue, {}};
    shared->search.identity_digest = request.identity.digest().hex();
    shared->search.op = op.name();
    shared->search.key = request.key.text();
    shared->search.coordinator = options_.persist.lease_holder.empty()
                                     ? lease_holder_name(holder_number_)
                                     : options_.persist.lease_holder;
  }
  TuneReport r = run_search(device_, op, request.key, options_, prior_(op, request.key),
                            banned(request), shared ? &*shared : nullptr);
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

WorkQueue* SearchSource::work_queue() {
  if (!options_.decide.share.enabled) return nullptr;
  std::lock_guard lock(queue_mutex_);
  if (!queue_ && !queue_refused_) {
    std::string why = "no store (memory-only)";
    if (store_) queue_ = store_->open_work_queue(why);
    if (!queue_) {
      queue_refused_ = true;
      options_.hooks.log.warn("searches are not shared: " + why);
    }
  }
  return queue_.get();
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
