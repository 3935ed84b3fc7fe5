#include "tunekit/search_worker.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "store/evidence_codec.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"
#include "tuner/schedule.hpp"
#include "tuner/search.hpp"
#include "tuner/search_budget.hpp"
#include "tuner/search_context.hpp"
#include "tuner/tuning_evaluator.hpp"

namespace tunekit {

using Steady = std::chrono::steady_clock;

// A search this worker evaluates points of: its own context (inputs, references, incumbent)
// and a full-schedule evaluator with no budget (the coordinator keeps the budget).
struct SearchWorker::Joined {
  Joined(WorkerTarget t, const TunerOptions& tuner_options)
      : target(std::move(t)), options(tuner_options), budget(0, [] {
          return std::chrono::duration<double>(Steady::now().time_since_epoch()).count();
        }) {
    options.decide.schedule = "full";
    schedule = detail::builtin_schedules().make(options.decide.schedule);
    context =
        std::make_unique<detail::SearchContext>(*target.device, *target.op, target.key, options);
    ready = context->prepare_inputs();
    evaluator = std::make_unique<detail::TuningEvaluator>(*context, *schedule, budget, 1, [] {
      return std::chrono::duration<double>(Steady::now().time_since_epoch()).count();
    });
  }
  WorkerTarget target;
  TunerOptions options;
  detail::SearchBudget budget;
  std::unique_ptr<detail::Schedule> schedule;
  std::unique_ptr<detail::SearchContext> context;
  std::unique_ptr<detail::TuningEvaluator> evaluator;
  bool ready = false;
};

SearchWorker::SearchWorker(WorkQueue& queue, WorkerResolver resolve, WorkerOptions options)
    : queue_(queue), resolve_(std::move(resolve)), options_(std::move(options)) {
  if (!resolve_) throw UsageError("SearchWorker needs a resolver (the ops it can evaluate)");
  if (!(options_.poll_seconds >= 0.001 && options_.poll_seconds <= 60))
    throw UsageError("WorkerOptions: poll_seconds must be in [0.001, 60], e.g. 0.5");
  if (!(options_.idle_exit_seconds >= 0 && options_.idle_exit_seconds <= 1e7))
    throw UsageError("WorkerOptions: idle_exit_seconds must be in [0, 1e7] (0: never)");
  detail::check_search_options(options_.tuner);
  holder_ = options_.holder.empty() ? lease_holder_name(0) : options_.holder;
}

SearchWorker::~SearchWorker() = default;

void SearchWorker::refresh() {
  const Log& log = options_.tuner.hooks.log;
  std::map<std::int64_t, bool> open;
  for (const SharedSearch& s : queue_.open_searches()) {
    open[s.id] = true;
    if (seen_.count(s.id)) continue;
    std::string why;
    try {
      why = join(s);
    } catch (const FatalError&) {
      throw;
    } catch (const std::exception& e) {  // a row another process wrote: refused, never fatal
      why = e.what();
    }
    seen_[s.id] = why.empty();
    if (!why.empty()) {
      ++summary_.searches_refused;
      log.info("not joining the search of " + s.op + " " + s.key + " (by " + s.coordinator +
               "): " + why);
      continue;
    }
    ++summary_.searches_joined;
    log.info("joined the search of " + s.op + " " + s.key + " (by " + s.coordinator + ")");
  }
  for (auto it = joined_.begin(); it != joined_.end();)
    it = open.count(it->first) ? std::next(it) : joined_.erase(it);
  for (auto it = seen_.begin(); it != seen_.end();)
    it = open.count(it->first) ? std::next(it) : seen_.erase(it);
}

std::string SearchWorker::join(const SharedSearch& s) {
  std::optional<WorkerTarget> target = resolve_(s);
  if (!target) return "an op this worker does not have";
  TunerOptions quiet = options_.tuner;  // an identity only: no store, no lock, no lease
  quiet.persist.store = "none";
  quiet.persist.lock_dir = "none";
  quiet.persist.lease_ttl_seconds = 0;
  Tuner identity_of(*target->device, quiet);
  const std::string digest = identity_of.identity(*target->op, target->key).digest().hex();
  if (digest != s.identity_digest)
    return "another identity (" + s.identity_digest.substr(0, 12) + ", here " +
           digest.substr(0, 12) + ": another device, toolchain, candidate set or environment)";
  auto joined = std::make_unique<Joined>(std::move(*target), options_.tuner);
  // Inputs this worker cannot make would finish every item it took as skipped: left to others.
  if (!joined->ready)
    return "its inputs cannot be made here (" + joined->context->report().reason + ")";
  joined_[s.id] = std::move(joined);
  return "";
}

namespace {

// Renews an item's lease every third of its TTL until it is dropped, or until a renewal says
// the lease is no longer the holder's (its result will be refused: nothing to keep alive).
class ItemHeartbeat {
 public:
  ItemHeartbeat(WorkQueue& queue, const WorkItem& item, std::chrono::milliseconds ttl)
      : thread_([this, &queue, item, ttl] {
          std::unique_lock lock(mutex_);
          while (!done_) {
            if (cv_.wait_for(lock, ttl / 3, [this] { return done_; })) break;
            lock.unlock();
            try {
              if (!queue.renew_item(item.id, item.holder, ttl)) return;
            } catch (const WorkQueueError&) {  // the lease may lapse: finishing tells
            }
            lock.lock();
          }
        }) {}
  ~ItemHeartbeat() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

void SearchWorker::work_on(const WorkItem& item) {
  Joined& j = *joined_.at(item.search);
  const auto ttl = std::chrono::milliseconds(
      static_cast<long long>(options_.tuner.decide.share.item_ttl_seconds * 1000));
  WorkResult result;
  result.worker = holder_;
  std::optional<FatalError> fatal;
  {
    ItemHeartbeat heartbeat(queue_, item, ttl);
    const std::string config = item.index < j.target.op->size()
                                   ? j.target.op->candidate(item.index).config.text()
                                   : std::string("(out of the space)");
    if (config != item.config) {
      CandidateReport c;
      c.outcome = {Status::rejected, "point " + std::to_string(item.index) + " is " + config +
                                         " here, " + item.config + " to the coordinator"};
      result.status = Status::rejected;
      result.evidence = detail::candidate_json(c).dump();
    } else {
      try {
        const std::size_t one[] = {item.index};
        const std::vector<PointResult> done = j.evaluator->evaluate(one);
        const CandidateReport* c = j.context->find(item.index);
        result.status = done.empty() ? Status::stopped : done.front().status;
        result.value = done.empty() ? 0 : done.front().value;
        if (c) result.evidence = detail::candidate_json(*c).dump();
      } catch (const FatalError& e) {
        fatal = e;
        result.status = Status::device_lost;
        CandidateReport c;
        c.outcome = {Status::device_lost, e.what()};
        result.evidence = detail::candidate_json(c).dump();
      } catch (const std::exception& e) {  // no verdict on the point: the coordinator runs it
        result.status = Status::skipped;
        CandidateReport c;
        c.outcome = {Status::skipped,
                     "this worker could not evaluate it: " + std::string(e.what())};
        result.evidence = detail::candidate_json(c).dump();
      }
    }
  }
  if (queue_.finish_item(item.id, holder_, result))
    ++summary_.items;
  else
    ++summary_.items_lost;
  if (fatal) throw *fatal;
}

WorkerSummary SearchWorker::run() {
  const Log& log = options_.tuner.hooks.log;
  const auto poll = std::chrono::duration<double>(options_.poll_seconds);
  const auto ttl = std::chrono::milliseconds(
      static_cast<long long>(options_.tuner.decide.share.item_ttl_seconds * 1000));
  auto idle_since = Steady::now();
  auto refreshed = Steady::time_point{};
  bool warned = false;
  while (true) {
    if (options_.stop && options_.stop()) {
      summary_.stop_reason = "stopped";
      break;
    }
    if (options_.max_items > 0 && summary_.items + summary_.items_lost >= options_.max_items) {
      summary_.stop_reason = "item limit";
      break;
    }
    std::optional<WorkItem> item;
    try {
      if (Steady::now() - refreshed >= poll) {
        refresh();
        refreshed = Steady::now();
      }
      std::vector<std::int64_t> ids;
      for (const auto& [id, j] : joined_) ids.push_back(id);
      item = queue_.take_item(ids, holder_, ttl, options_.tuner.decide.share.max_attempts);
      if (item) work_on(*item);
      warned = false;
    } catch (const WorkQueueError& e) {
      if (!warned) log.warn(std::string(e.what()) + ": trying again");
      warned = true;
    }
    if (item) {
      idle_since = Steady::now();
      continue;
    }
    if (options_.idle_exit_seconds > 0 &&
        Steady::now() - idle_since >= std::chrono::duration<double>(options_.idle_exit_seconds)) {
      summary_.stop_reason = "idle";
      break;
    }
    std::this_thread::sleep_for(poll);
  }
  return summary_;
}

}  // namespace tunekit
