#include "tuner/revalidation.hpp"

#include "tuner/search_context.hpp"

namespace tunekit::detail {

Revalidator::Revalidator(Device& device, const TunerOptions& options)
    : device_(device), options_(options) {
  options_.hooks.on_progress = nullptr;
  options_.hooks.on_retry = nullptr;
  options_.measure.rotate = 1;  // no rotation copies: nothing is timed
}

std::optional<Outcome> Revalidator::check(const OpBase& op, const Key& key, std::size_t index) {
  if (!op.revalidates()) return std::nullopt;
  const Entry entry{op.checksum().high, op.checksum().low, key.digest().high, key.digest().low,
                    index};
  {
    std::lock_guard lock(mutex_);
    if (auto known = done_.find(entry); known != done_.end()) return known->second;
  }
  // Run without the lock: the candidate may hand work to threads that call back into the
  // tuner for other keys (single flight already keeps two callers of one key apart).
  std::optional<Outcome> outcome;
  SearchContext context(device_, op, key, options_);
  if (context.prepare_inputs(/*input_sets=*/1)) {  // one run: the search validated on all
    if (context.admit(index)) {
      outcome = Outcome::success();
      context.drop_trial(index);
    } else {
      outcome = context.find(index)->outcome;
    }
  }
  std::lock_guard lock(mutex_);
  done_.emplace(entry, outcome);
  return outcome;
}

}  // namespace tunekit::detail
