#include "tuner/search_budget.hpp"

#include <algorithm>

namespace tunekit::detail {

double fitting(std::initializer_list<DecisionPart> parts, double room) {
  double sum = 0;
  for (const DecisionPart& p : parts) {
    if (!(p.least > 0) || sum + p.least > room) continue;
    sum += std::min(p.whole, room - sum);
  }
  return sum;
}

SearchBudget::SearchBudget(double seconds, std::function<double()> now)
    : seconds_(seconds), now_(std::move(now)), start_(now_()) {}

double SearchBudget::elapsed() const {
  return now_() - start_;
}

void SearchBudget::saw_build(double seconds) {
  projected_ = std::max(projected_, seconds);
}

void SearchBudget::hold_for_decision(std::function<double(double)> cost, double share) {
  decision_cost_ = std::move(cost);
  decision_share_ = share;
}

double SearchBudget::decision_reserve() const {
  if (!limited() || !decision_cost_) return 0;
  // confirm_share 0 means "no cap" on the pairs; the reserve still stops at half the budget.
  const double share = decision_share_ > 0 ? std::min(decision_share_, 0.5) : 0.5;
  const double cap = share * seconds_;
  const double cost = decision_cost_(cap);
  if (!(cost > 0)) return 0;  // NaN, negative: nothing projected
  return std::min(cost, cap);
}

bool SearchBudget::admits_build() const {
  return !limited() || elapsed() + projected_ + reserve() <= seconds_;
}

bool SearchBudget::admits_timing(double lead) const {
  return !limited() || elapsed() + std::max(0.0, lead) < seconds_ - reserve();
}

bool SearchBudget::spent() const {
  return limited() && elapsed() >= seconds_;
}

}  // namespace tunekit::detail
