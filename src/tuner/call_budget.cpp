// CallBudget / CallShare: trial calls several searches draw from (include/tunekit/refinement.hpp).
#include <cmath>
#include <string>
#include <utility>

#include "tunekit/errors.hpp"
#include "tunekit/refinement.hpp"

namespace tunekit {

CallBudget::CallBudget(std::size_t calls) : total_(calls) {}

bool CallBudget::try_spend(std::size_t calls) {
  std::size_t spent = spent_.load(std::memory_order_relaxed);
  do {
    if (calls > total_ - spent) return false;
  } while (!spent_.compare_exchange_weak(spent, spent + calls, std::memory_order_relaxed));
  return true;
}

CallShare CallBudget::share(std::string name, std::size_t calls) {
  return CallShare(*this, std::move(name), calls);
}

CallShare CallBudget::share_fraction(std::string name, double fraction) {
  if (!(fraction > 0 && fraction <= 1))
    throw UsageError("a call budget share is a fraction in (0, 1] of the budget, got " +
                     std::to_string(fraction) + " for '" + name + "'");
  // A total near SIZE_MAX rounds up to 2^64 as a double, which no size_t holds (the cast
  // would be undefined: 0 on x86-64, a share that can spend nothing).
  const double calls = std::floor(fraction * static_cast<double>(total_));
  const bool whole = calls >= static_cast<double>(total_);
  return CallShare(*this, std::move(name), whole ? total_ : static_cast<std::size_t>(calls));
}

CallShare::CallShare(CallBudget& budget, std::string name, std::size_t cap)
    : budget_(&budget), name_(std::move(name)), cap_(cap) {}

CallShare::CallShare(CallShare&& other) noexcept
    : budget_(other.budget_),
      name_(std::move(other.name_)),
      cap_(other.cap_),
      spent_(other.spent_.load(std::memory_order_relaxed)) {}

bool CallShare::try_spend(std::size_t calls) {
  std::size_t spent = spent_.load(std::memory_order_relaxed);
  do {
    if (calls > cap_ - spent) return false;
  } while (!spent_.compare_exchange_weak(spent, spent + calls, std::memory_order_relaxed));
  if (budget_->try_spend(calls)) return true;
  spent_.fetch_sub(calls, std::memory_order_relaxed);  // the budget said no: give it back
  return false;
}

std::size_t CallShare::left() const {
  const std::size_t own = cap_ - spent();
  const std::size_t shared = budget_->left();
  return own < shared ? own : shared;
}

}  // namespace tunekit
