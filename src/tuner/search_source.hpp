// The search link (DESIGN §6, §7): one search at a time per device (a turn in this process, a
// lock file across processes), then the strategy's search; a measured winner is kept by the
// sources before it. Absent from the chain of mode cached (Tuner::tune has its own chain).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "tunekit/device.hpp"
#include "tunekit/store.hpp"
#include "tunekit/strategy.hpp"
#include "tuner/choice_source.hpp"
#include "tuner/live_bans.hpp"

namespace tunekit::detail {

class SearchSource final : public ChoiceSource {
 public:
  // `reread`: the store link, asked again after waiting for another process's search.
  // `prior`: the cost model's view of the points of (op, key).
  SearchSource(Device& device, const TunerOptions& options, Store* store, ChoiceSource& reread,
               const LiveBans& bans, std::function<SearchPrior(const OpBase&, const Key&)> prior);

  std::optional<Served> find(ServeRequest& request) override;

 private:
  // The cross-process lock file of this device ("": in-process turns only).
  std::string lock_path() const;
  // Live bans of this process and bans the store kept from earlier ones.
  std::map<std::size_t, std::string> banned(const ServeRequest& request) const;
  Served searched(ServeRequest& request);
  // The default, with why no search ran (the miss is recorded).
  Served refused(ServeRequest& request, const std::string& why);
  struct LeaseAnswer {
    std::optional<Served> landed;  // the holder's choice, stored while this one waited
    std::string refusal;           // another holder's live lease: serve the default
    double waited_seconds = 0;     // spent taking it (waiting for a busy one included)
  };
  LeaseAnswer take_lease(ServeRequest& request);
  // The store's queue of shared searches when decide.share asks for one (nullptr: alone; the
  // reason is warned once).
  WorkQueue* work_queue();
  // TunerOptions::persist.record_misses: a key this search leaves without a stored choice.
  void record_miss(const ServeRequest& request);

  Device& device_;
  const TunerOptions& options_;
  Store* store_;
  ChoiceSource& reread_;
  const LiveBans& bans_;
  std::function<SearchPrior(const OpBase&, const Key&)> prior_;
  std::uint64_t holder_number_;            // this source's N in lease_holder_name
  std::atomic<bool> lock_warned_{false};   // an unusable device lock is reported once
  std::atomic<bool> lease_warned_{false};  // unusable leases are reported once
  std::mutex queue_mutex_;
  std::unique_ptr<WorkQueue> queue_;
  bool queue_refused_ = false;
};

}  // namespace tunekit::detail
