// random: uniform sampling without replacement.
#include <algorithm>

#include "search/strategies.hpp"

namespace tunekit::detail {
namespace {

class RandomStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "random"; }
  std::vector<std::size_t> propose(const Enumeration&, const History& history, std::size_t max,
                                   Rng& rng) override {
    std::vector<std::size_t> out;
    while (out.size() < max) {
      const std::optional<std::size_t> i = random_unevaluated(history, rng);
      if (!i) break;
      if (std::find(out.begin(), out.end(), *i) != out.end()) {
        if (out.size() + history.size() >= history.space_size()) break;
        continue;
      }
      out.push_back(*i);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_random(StrategyOptions&) {
  return std::make_unique<RandomStrategy>();
}

}  // namespace tunekit::detail
