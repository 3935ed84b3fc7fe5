#include "tunekit/errors.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

History::History(std::size_t space_size)
    : evaluated_(space_size, false), value_(space_size, std::numeric_limits<double>::infinity()) {}

void History::add(const Evaluation& e) {
  if (e.index >= evaluated_.size())
    throw UsageError("evaluation of index " + std::to_string(e.index) + " outside a space of " +
                     std::to_string(evaluated_.size()));
  if (evaluated_[e.index])
    throw UsageError("index " + std::to_string(e.index) + " was already evaluated");
  evaluated_[e.index] = true;
  // A hopeless point keeps its partial reading (slow, and known to be); a failure is inf.
  const bool informative = e.ok() || e.status == Status::hopeless;
  value_[e.index] = informative ? e.value : std::numeric_limits<double>::infinity();
  list_.push_back(e);
  list_.back().value = value_[e.index];
  if (e.ok() && (!best_ || e.value < list_[*best_].value)) best_ = list_.size() - 1;
}

std::optional<double> History::value(std::size_t index) const {
  if (!evaluated_.at(index)) return std::nullopt;
  return value_[index];
}

}  // namespace tunekit
