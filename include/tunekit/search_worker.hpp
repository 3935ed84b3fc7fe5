// A worker of shared searches (docs/fleet.md "Shared searches"; `tunekit worker`): joins the
// open searches of a store whose hardware identity it shares, leases their work items one at
// a time, builds, validates and measures each point on its own device (one full window, the
// "full" schedule), renews the item's lease while it does, and writes the result back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/tuner_options.hpp"
#include "tunekit/work_queue.hpp"

namespace tunekit {

// What a shared search names, as this worker can evaluate it.
struct WorkerTarget {
  Device* device = nullptr;
  const OpBase* op = nullptr;
  Key key;
};
// The device, op and key of a search (by its op name and key text); nullopt: not an op this
// worker has (the search is left to others). Throwing UsageError says the same, with why.
using WorkerResolver = std::function<std::optional<WorkerTarget>(const SharedSearch&)>;

struct WorkerOptions {
  // How points are measured and what makes the identity: measure, decide.numerics_policy,
  // persist.environment, hooks.log; decide.share.item_ttl_seconds and max_attempts.
  TunerOptions tuner;
  std::string holder;            // the name its leases carry ("": lease_holder_name(0))
  double poll_seconds = 0.5;     // how often the store is asked for searches and items
  double idle_exit_seconds = 0;  // stop after this long without an item (0: never)
  std::size_t max_items = 0;     // stop after this many items (0: no limit)
  std::function<bool()> stop;    // asked between items (a signal handler's flag)
};

struct WorkerSummary {
  std::size_t items = 0;             // items evaluated and recorded
  std::size_t items_lost = 0;        // evaluated, but the lease had passed to another worker
  std::size_t searches_joined = 0;   // searches whose identity matched
  std::size_t searches_refused = 0;  // searches of another identity, or of an op it lacks
  std::string stop_reason;           // "idle", "item limit", "stopped"
};

class SearchWorker {
 public:
  SearchWorker(WorkQueue& queue, WorkerResolver resolve, WorkerOptions options);
  ~SearchWorker();
  SearchWorker(const SearchWorker&) = delete;
  SearchWorker& operator=(const SearchWorker&) = delete;

  // Works until idle, the item limit or stop(). A lost device (FatalError) propagates after
  // its item is recorded; a store that cannot be asked is waited for (warned once).
  WorkerSummary run();

 private:
  struct Joined;
  void refresh();
  // Joins search `s` when it is this worker's to help with; else says why not.
  std::string join(const SharedSearch& s);
  void work_on(const WorkItem& item);

  WorkQueue& queue_;
  WorkerResolver resolve_;
  WorkerOptions options_;
  std::string holder_;
  std::map<std::int64_t, std::unique_ptr<Joined>> joined_;
  std::map<std::int64_t, bool> seen_;  // search -> joined
  WorkerSummary summary_;
};

}  // namespace tunekit
