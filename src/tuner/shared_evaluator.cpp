#include "tuner/shared_evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <thread>

#include "store/evidence_codec.hpp"

namespace tunekit::detail {
namespace {

std::string milliseconds_text(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g ms", seconds * 1e3);
  return buffer;
}

// A coordinator's own items: it cannot renew them while it evaluates, and when it dies its
// search dies with it, so they live as long as the search does.
constexpr std::chrono::milliseconds kOwnItemTtl{600000};

}  // namespace

SharedEvaluator::SharedEvaluator(Evaluator& local, SearchContext& context, WorkQueue& queue,
                                 std::int64_t search, std::string coordinator,
                                 std::function<bool()> out_of_time)
    : local_(local),
      context_(context),
      queue_(queue),
      search_(search),
      coordinator_(std::move(coordinator)),
      out_of_time_(std::move(out_of_time)),
      share_(context.options().decide.share) {}

std::vector<PointResult> SharedEvaluator::evaluate(std::span<const std::size_t> batch) {
  // The first batch (the default and the anchors) is the floor: measured here.
  if (first_ || queue_lost_) {
    first_ = false;
    return local_.evaluate(batch);
  }
  std::vector<std::size_t> pending(batch.begin(), batch.end());
  std::vector<PointResult> out;
  std::vector<std::pair<std::size_t, std::string>> items;
  for (std::size_t index : pending)
    items.emplace_back(index, context_.op().candidate(index).config.text());
  try {
    queue_.add_items(search_, items);
  } catch (const WorkQueueError& e) {
    lost(e.what(), pending, out);
    return out;
  }
  wait_for(pending, out);
  return out;
}

void SharedEvaluator::wait_for(std::vector<std::size_t>& pending, std::vector<PointResult>& out) {
  const auto poll = std::chrono::duration<double>(share_.poll_seconds);
  auto last_abandon = std::chrono::steady_clock::now();
  while (!pending.empty()) {
    if (out_of_time_ && out_of_time_()) {
      stopped_ = "time budget";  // the items left are dropped with the search
      return;
    }
    try {
      bool progressed = collect(pending, out);
      if (pending.empty()) return;
      progressed = take_one(pending, out) || progressed;
      if (!local_.stopped().empty()) return;
      if (!progressed &&
          std::chrono::steady_clock::now() - last_abandon > std::chrono::seconds(1)) {
        last_abandon = std::chrono::steady_clock::now();
        queue_.abandon_items(search_, share_.max_attempts);
        // Nothing queued or leased, yet points outstanding: their items are gone (never
        // expected; a guard against waiting forever). One more collect, then they run here.
        if (queue_.unfinished_items(search_) == 0) {
          collect(pending, out);
          if (!pending.empty()) {
            for (const PointResult& p : local_.evaluate(pending)) out.push_back(p);
            pending.clear();
          }
          return;
        }
      }
      if (!progressed) std::this_thread::sleep_for(poll);
    } catch (const WorkQueueError& e) {
      lost(e.what(), pending, out);
      return;
    }
  }
}

bool SharedEvaluator::collect(std::vector<std::size_t>& pending, std::vector<PointResult>& out) {
  bool any = false;
  std::vector<std::size_t> again;  // points a worker could not judge: evaluated here
  for (const FinishedItem& f : queue_.collect_finished(search_, coordinator_)) {
    const auto it = std::find(pending.begin(), pending.end(), f.item.index);
    if (it == pending.end()) continue;  // not asked for now (evaluated here meanwhile)
    pending.erase(it);
    any = true;
    if (f.result.worker == coordinator_) continue;  // taken here: its result is out already
    if (!judged_there(f.result)) {
      again.push_back(f.item.index);
      continue;
    }
    Remote r;
    r.worker = f.result.worker;
    // What another process wrote is outside data: anything but an object is no evidence.
    if (const CodecJson sent = CodecJson::parse(f.result.evidence, nullptr, false);
        sent.is_object())
      r.evidence = candidate_from_json(sent, 0);
    r.evidence.outcome.status = f.result.status;
    if (f.result.evidence.empty())
      r.evidence.outcome.message = "its workers died on it " + std::to_string(f.item.attempts) +
                                   " times (last: " + f.result.worker + ")";
    r.point = {f.item.index, f.result.status,
               f.result.status == Status::ok || f.result.status == Status::hopeless
                   ? f.result.value
                   : std::numeric_limits<double>::infinity()};
    out.push_back(r.point);
    remote_[f.item.index] = std::move(r);
  }
  if (!again.empty()) {
    local_items_ += again.size();  // evaluated here after all: counted with this process's
    for (const PointResult& p : local_.evaluate(again)) out.push_back(p);
  }
  return any;
}

bool SharedEvaluator::judged_there(const WorkResult& r) {
  // Not a verdict on the point: the worker's budget, inputs or device failed it.
  if (r.status == Status::stopped || r.status == Status::skipped ||
      r.status == Status::device_lost || r.status == Status::refused)
    return false;
  // A reading written by another process is outside data: only a positive, finite one counts.
  if (r.status == Status::ok || r.status == Status::hopeless)
    return std::isfinite(r.value) && r.value > 0;
  return true;
}

bool SharedEvaluator::take_one(std::vector<std::size_t>& pending, std::vector<PointResult>& out) {
  const std::int64_t searches[] = {search_};
  const std::optional<WorkItem> item =
      queue_.take_item(searches, coordinator_, kOwnItemTtl, share_.max_attempts);
  if (!item) return false;
  const auto it = std::find(pending.begin(), pending.end(), item->index);
  const std::size_t point = item->index;
  std::vector<PointResult> here;
  if (it != pending.end()) {
    const std::size_t one[] = {point};
    here = local_.evaluate(one);
    pending.erase(it);
    ++local_items_;
  }
  for (const PointResult& p : here) out.push_back(p);  // kept whatever the queue says next
  WorkResult result;
  result.worker = coordinator_;
  if (!here.empty()) {
    result.status = here.front().status;
    result.value = here.front().value;
  } else {
    result.status = Status::stopped;  // the budget stopped it before it started
  }
  queue_.finish_item(item->id, coordinator_, result);
  return true;
}

void SharedEvaluator::lost(const std::string& why, std::vector<std::size_t>& pending,
                           std::vector<PointResult>& out) {
  if (!queue_lost_)
    context_.options().hooks.log.warn(why + ": the shared search of " + context_.op().name() +
                                      " goes on in this process alone");
  queue_lost_ = true;
  for (const PointResult& p : local_.evaluate(pending)) out.push_back(p);
  pending.clear();
}

void SharedEvaluator::decide() {
  std::vector<const Remote*> measured;
  for (const auto& [index, r] : remote_)
    if (r.point.status == Status::ok && context_.find(index) == nullptr) measured.push_back(&r);
  std::sort(measured.begin(), measured.end(), [](const Remote* a, const Remote* b) {
    return a->point.value < b->point.value ||
           (a->point.value == b->point.value && a->point.index < b->point.index);
  });
  std::vector<std::size_t> again;
  for (std::size_t i = 0; i < measured.size() && i < share_.remeasure_top; ++i)
    again.push_back(measured[i]->point.index);
  if (!again.empty()) local_.evaluate(again);
  for (const auto& [index, r] : remote_) {
    const CandidateReport* here = context_.find(index);
    // Measured here; or the budget stopped its re-measure before it started: the worker's
    // reading then stays as evidence, as for the points not re-measured.
    const bool not_started = here && here->outcome.status == Status::stopped && !here->timing;
    if (here && !not_started) continue;
    CandidateReport& c = context_.entry(index);  // name, config, default as this op has them
    c.outcome = r.evidence.outcome;
    c.timing = r.evidence.timing;
    c.retries = r.evidence.retries;
    c.score = r.evidence.score;
    c.compile_seconds = r.evidence.compile_seconds;
    if (r.point.status == Status::ok)
      c.outcome = {
          Status::hopeless,
          "measured by " + r.worker + ": " + milliseconds_text(r.point.value) +
              (not_started ? std::string(" there; the budget left no time to measure "
                                         "it here")
                           : " there, not among the " + std::to_string(share_.remeasure_top) +
                                 " best, so not measured here")};
    else if (!c.outcome.message.empty())
      c.outcome.message = "on " + r.worker + ": " + c.outcome.message;
  }
}

}  // namespace tunekit::detail
