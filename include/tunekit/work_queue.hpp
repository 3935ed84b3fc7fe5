// Shared searches (docs/fleet.md "Shared searches"): a search whose points are evaluated by
// workers on other processes or machines with the same hardware identity. The coordinator's
// strategy proposes batches; each point becomes a work item in the store's database, leased by
// one worker at a time (PostgreSQL: FOR UPDATE SKIP LOCKED), renewed while it is evaluated and
// finished with its result. A worker that dies mid-item loses its lease when it expires and
// the item is leased again. Times are the store's clock (the server's now()).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tunekit/outcome.hpp"

namespace tunekit {

// One search others may help with.
struct SharedSearch {
  std::int64_t id = 0;
  std::string identity_digest;  // hex of Identity::digest(): only a worker with the same joins
  std::string op;
  std::string key;          // text form (the op's key parser reads it back)
  std::string coordinator;  // lease_holder_name of the process that runs the search
};

// One point of a shared search, as leased to a worker.
struct WorkItem {
  std::int64_t id = 0;
  std::int64_t search = 0;
  std::size_t index = 0;  // the point, an index into the op's space
  std::string config;     // the point's Config text (a worker checks it is the same point)
  std::string holder;     // who holds it now
  int attempts = 0;       // leases taken on it so far (this one included)
};

// What evaluating a work item gave.
struct WorkResult {
  Status status = Status::ok;
  double value = 0;      // the score in seconds (ok or hopeless), else unused
  std::string evidence;  // the candidate's report as JSON (docs/formats.md "evidence")
  std::string worker;    // who evaluated it
};

struct FinishedItem {
  WorkItem item;
  WorkResult result;
};

// The store behind a work queue could not be asked (unreachable, or it refused): the caller
// goes on without it (a coordinator evaluates its points itself, a worker tries again later).
class WorkQueueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class WorkQueue {
 public:
  virtual ~WorkQueue() = default;
  virtual std::string describe() const = 0;
  // Opens a search for workers; returns its id.
  virtual std::int64_t open_search(const SharedSearch& search) = 0;
  // Closes it: its unfinished items are dropped and no worker takes more of it.
  virtual void close_search(std::int64_t search) = 0;
  // The open searches, oldest first.
  virtual std::vector<SharedSearch> open_searches() = 0;
  // Queues points of an open search: (index, config text) each; a point already queued or
  // finished for the search is left as it is.
  virtual void add_items(std::int64_t search,
                         std::span<const std::pair<std::size_t, std::string>> points) = 0;
  // Leases the oldest item of one of `searches` that is queued, or leased by a holder whose
  // lease expired and that has been leased fewer than `max_attempts` times, to `holder` until
  // `ttl` from now. nullopt: none.
  virtual std::optional<WorkItem> take_item(std::span<const std::int64_t> searches,
                                            const std::string& holder,
                                            std::chrono::milliseconds ttl, int max_attempts) = 0;
  // Pushes the holder's lease of an item out to `ttl` from now; false when it is no longer
  // the holder's (it expired and was leased again, or its search closed).
  virtual bool renew_item(std::int64_t item, const std::string& holder,
                          std::chrono::milliseconds ttl) = 0;
  // Records the result of an item the holder still holds; false (nothing recorded) otherwise.
  virtual bool finish_item(std::int64_t item, const std::string& holder,
                           const WorkResult& result) = 0;
  // Finishes as crashed the items of `search` whose lease expired after `max_attempts`
  // leases (their workers died on them each time); returns how many.
  virtual std::size_t abandon_items(std::int64_t search, int max_attempts) = 0;
  // The items of `search` finished since the last call (each returned once), in id order. It
  // also tells the store the coordinator is still there: a search nobody collects from for
  // ten minutes is dropped.
  virtual std::vector<FinishedItem> collect_finished(std::int64_t search,
                                                     const std::string& coordinator) = 0;
  // Items of `search` not finished yet (queued or leased).
  virtual std::size_t unfinished_items(std::int64_t search) = 0;
};

}  // namespace tunekit
