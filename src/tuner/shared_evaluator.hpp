// The coordinator's side of a shared search (docs/fleet.md "Shared searches"): each batch the
// strategy proposes is queued as work items; workers with the same hardware identity and this
// process take them, and the evaluator returns each point's result as its item finishes.
// Readings of other machines guide the strategy only: decide() re-measures the best of them
// here, so the pick is ranked on one clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tunekit/strategy.hpp"
#include "tunekit/tuner_options.hpp"
#include "tunekit/work_queue.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {

class SharedEvaluator final : public Evaluator {
 public:
  // `local` evaluates here (the first batch, the items this process takes, the re-measures);
  // `out_of_time` says the search's budget is spent. `search` is open on `queue`.
  SharedEvaluator(Evaluator& local, SearchContext& context, WorkQueue& queue, std::int64_t search,
                  std::string coordinator, std::function<bool()> out_of_time);

  std::vector<PointResult> evaluate(std::span<const std::size_t> batch) override;
  double elapsed_seconds() const override { return local_.elapsed_seconds(); }
  std::string stopped() const override { return stopped_.empty() ? local_.stopped() : stopped_; }

  // After the search: the best `remeasure_top` worker-measured points are measured here; the
  // others' evidence joins the report (a failure as it was classified there, a reading as
  // hopeless with the worker's reading in its message).
  void decide();
  // Whether a worker's result is a verdict on its point (else the point is evaluated here): not
  // when the worker's budget, inputs or device failed it, nor a reading that is not a
  // positive, finite number (what another process wrote is outside data).
  static bool judged_there(const WorkResult& result);
  // Points workers evaluated, and points this process took from the queue.
  std::size_t remote_points() const { return remote_.size(); }
  std::size_t local_items() const { return local_items_; }

 private:
  struct Remote {
    PointResult point;
    CandidateReport evidence;
    std::string worker;
  };
  // The results of `pending` points as their items finish (taking items here meanwhile).
  void wait_for(std::vector<std::size_t>& pending, std::vector<PointResult>& out);
  bool collect(std::vector<std::size_t>& pending, std::vector<PointResult>& out);
  bool take_one(std::vector<std::size_t>& pending, std::vector<PointResult>& out);

  // The queue failed: the rest is evaluated here.
  void lost(const std::string& why, std::vector<std::size_t>& pending,
            std::vector<PointResult>& out);

  Evaluator& local_;
  SearchContext& context_;
  WorkQueue& queue_;
  std::int64_t search_;
  std::string coordinator_;
  std::function<bool()> out_of_time_;
  const ShareOptions& share_;
  bool first_ = true;
  bool queue_lost_ = false;
  std::string stopped_;
  std::map<std::size_t, Remote> remote_;
  std::size_t local_items_ = 0;
};

}  // namespace tunekit::detail
