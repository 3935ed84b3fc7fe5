#include "tuner/tuning_lease_hold.hpp"

#include <fmt/format.h>

namespace tunekit::detail {

TuningLeaseHold::TuningLeaseHold(Store& store, TuningLease wanted, std::chrono::milliseconds ttl,
                                 Log log)
    : store_(store), wanted_(std::move(wanted)), ttl_(ttl), log_(std::move(log)) {
  take();
}

const LeaseTaking& TuningLeaseHold::take() {
  if (held()) return taking_;
  taking_ = store_.take_lease(wanted_, ttl_);
  // A holder of this host that died (killed, Ctrl-C) without releasing: its lease is taken
  // over now rather than when it expires. Of several takers at once the store lets one in.
  if (taking_.state == LeaseState::busy && lease_holder_is_gone(taking_.current.holder)) {
    store_.release_lease(wanted_.identity_digest, taking_.current.holder);
    taking_ = store_.take_lease(wanted_, ttl_);
  }
  if (held()) start_heartbeat();
  return taking_;
}

TuningLeaseHold::~TuningLeaseHold() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  try {
    store_.release_lease(wanted_.identity_digest, wanted_.holder);
  } catch (...) {  // a destructor must not throw; the lease then expires after its TTL
  }
}

void TuningLeaseHold::start_heartbeat() {
  thread_ = std::thread([this] { heartbeat(); });
}

// Renews every third of the TTL: two renewals may fail (a slow store, a stall) before the
// lease expires. A lost lease is said once; the search goes on (its choice is stored as any
// other: a later put of the same identity replaces it).
void TuningLeaseHold::heartbeat() {
  const auto period = std::max(ttl_ / 3, std::chrono::milliseconds(1));
  bool lost = false;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    lock.unlock();
    // Nothing may escape this thread (std::terminate): a throwing store or log hook is a
    // renewal that failed.
    bool renewed = false;
    try {
      renewed = store_.renew_lease(wanted_.identity_digest, wanted_.holder, ttl_);
      if (!renewed && !lost) {
        log_.warn(fmt::format(
            "lost the tuning lease of {} {} in {} (not renewed within {} ms): another process "
            "may tune this key too; this search goes on",
            wanted_.op, wanted_.key, store_.describe(), ttl_.count()));
      }
    } catch (...) {
    }
    lost = lost || !renewed;
    lock.lock();
  }
}

std::string lease_refusal(const TuningLease& other, std::int64_t store_now_ms, double waited_s) {
  const double left_s = static_cast<double>(other.expires_at_ms - store_now_ms) / 1000.0;
  const std::string waited =
      waited_s > 0 ? fmt::format(" (waited {:g} s for its choice)", waited_s) : "";
  return fmt::format(
      "another process is tuning this key (lease of {}, {:.1f} s left unless renewed){}; to "
      "wait for its choice instead, set TunerOptions::persist.wait_for_device_seconds "
      "(tunekit tune --wait-for-device)",
      other.holder, std::max(left_s, 0.0), waited);
}

}  // namespace tunekit::detail
