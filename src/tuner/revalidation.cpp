#include "tuner/revalidation.hpp"

#include "tuner/search_context.hpp"

namespace tunekit::detail {

Revalidator::Revalidator(Device& device, const TunerOptions& options)
    : device_(device), options_(options) {
  options_.on_progress = nullptr;
  options_.on_retry = nullptr;
  options_.rotate = 1;  // no rotation copies: nothing is timed
}

std::optional<Outcome> Revalidator::check(const OpBase& op, const Key& key, std::size_t index) {
  if (!op.revalidates()) return std::nullopt;
  const Entry entry{op.checksum().high, op.checksum().low, key.digest().high, key.digest().low,
                    index};
  // Serialised: a validation run uses the device, and two callers of one key run it once.
  std::lock_guard lock(mutex_);
  if (auto known = done_.find(entry); known != done_.end()) return known->second;
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
  done_.emplace(entry, outcome);
  return outcome;
}

}  // namespace tunekit::detail
