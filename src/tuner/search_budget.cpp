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

bool SearchBudget::admits_build() const {
  return !limited() || elapsed() + 2 * projected_ <= seconds_;
}

bool SearchBudget::admits_timing() const {
  return !limited() || elapsed() < seconds_ - reserve();
}

bool SearchBudget::spent() const {
  return limited() && elapsed() >= seconds_;
}

}  // namespace tunekit::detail
