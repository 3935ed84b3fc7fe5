#include "tuner/search_budget.hpp"

#include <algorithm>

namespace tunekit::detail {

SearchBudget::SearchBudget(double seconds, std::function<double()> now)
    : seconds_(seconds), now_(std::move(now)), start_(now_()) {}

double SearchBudget::elapsed() const {
  return now_() - start_;
}

void SearchBudget::saw_build(double seconds) {
  projected_ = std::max(projected_, seconds);
}

void SearchBudget::hold_for_decision(std::function<double()> cost, double share) {
  decision_cost_ = std::move(cost);
  decision_share_ = share;
}

double SearchBudget::decision_reserve() const {
  if (!limited() || !decision_cost_) return 0;
  const double cost = decision_cost_();
  if (!(cost > 0)) return 0;  // NaN, negative: nothing projected
  // confirm_share 0 means "no cap" on the pairs; the reserve still stops at half the budget.
  const double share = decision_share_ > 0 ? std::min(decision_share_, 0.5) : 0.5;
  return std::min(cost, share * seconds_);
}

bool SearchBudget::admits_build() const {
  return !limited() || elapsed() + projected_ + reserve() <= seconds_;
}

bool SearchBudget::admits_timing() const {
  return !limited() || elapsed() < seconds_ - reserve();
}

bool SearchBudget::spent() const {
  return limited() && elapsed() >= seconds_;
}

}  // namespace tunekit::detail
