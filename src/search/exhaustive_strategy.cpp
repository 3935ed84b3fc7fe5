// exhaustive: every configuration in enumeration order.
#include "search/strategies.hpp"

namespace tunekit::detail {
namespace {

class ExhaustiveStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "exhaustive"; }
  std::vector<std::size_t> propose(const Enumeration& space, const History& history,
                                   std::size_t max, Rng&) override {
    std::vector<std::size_t> out;
    while (next_ < space.size() && out.size() < max) {
      if (!history.evaluated(next_)) out.push_back(next_);
      ++next_;
    }
    return out;
  }

 private:
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive(StrategyOptions&) {
  return std::make_unique<ExhaustiveStrategy>();
}

}  // namespace tunekit::detail
