// A tuning lease held while a search runs (docs/fleet.md "Leases"): taken in the store before
// the search, renewed by a heartbeat thread every third of its TTL, released when the hold is
// destroyed — after the chain has stored the choice, so no other process takes the lease
// while the store still lacks it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "tunekit/log.hpp"
#include "tunekit/store.hpp"

namespace tunekit::detail {

class TuningLeaseHold {
 public:
  // Asks the store once. held: the heartbeat runs until destruction. busy or unavailable: the
  // hold holds nothing (take() may ask again).
  TuningLeaseHold(Store& store, TuningLease wanted, std::chrono::milliseconds ttl, Log log);
  ~TuningLeaseHold();
  TuningLeaseHold(const TuningLeaseHold&) = delete;
  TuningLeaseHold& operator=(const TuningLeaseHold&) = delete;

  // Asks the store again (a busy lease may have been released or have expired).
  const LeaseTaking& take();
  const LeaseTaking& taking() const { return taking_; }
  bool held() const { return taking_.state == LeaseState::held; }

 private:
  void start_heartbeat();
  void heartbeat();

  Store& store_;
  TuningLease wanted_;
  std::chrono::milliseconds ttl_;
  Log log_;
  LeaseTaking taking_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

// Why a miss is served the default while another holder's lease is live.
std::string lease_refusal(const TuningLease& other, std::int64_t store_now_ms, double waited_s);

}  // namespace tunekit::detail
