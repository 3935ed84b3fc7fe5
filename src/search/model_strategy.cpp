// model: proposes in cost-model order (DESIGN §6, §9). The model's best-ranked points come
// first, unscored points after them (the model cannot say they are slow); `top` / `fraction`
// keep only that many scored points, and `floor` stops the search once a reading is within
// that factor of the roofline floor. Without a model (replay, an op without a work model) it
// proposes in enumeration order, like exhaustive.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/strategies.hpp"

namespace tunekit::detail {
namespace {

class ModelStrategy final : public Strategy {
 public:
  ModelStrategy(std::size_t top, double fraction, double floor)
      : top_(top), fraction_(fraction), floor_(floor) {}
  std::string_view name() const override { return "model"; }
  bool prunes(const Enumeration&) const override { return top_ > 0 || fraction_ < 1 || floor_ > 0; }

  void start(const Enumeration& space, const SearchPrior& prior) override {
    const std::vector<double>& score = prior.model_seconds;
    const std::vector<int>& rank = prior.model_rank;
    order_.resize(space.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    auto scored = [&](std::size_t i) { return i < score.size() && std::isfinite(score[i]); };
    // The model's decision rank where it gives one (its pick first, its tie rules kept), else
    // the score.
    auto before = [&](std::size_t a, std::size_t b) {
      const int ra = a < rank.size() ? rank[a] : 0, rb = b < rank.size() ? rank[b] : 0;
      if ((ra > 0) != (rb > 0)) return ra > 0;
      if (ra > 0) return ra < rb;
      return score[a] < score[b];
    };
    std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
      if (scored(a) != scored(b)) return scored(a);
      return scored(a) && before(a, b);
    });
    const std::size_t n_scored =
        static_cast<std::size_t>(std::count_if(order_.begin(), order_.end(), scored));
    std::size_t keep = n_scored;
    if (top_ > 0) keep = std::min(keep, top_);
    if (fraction_ < 1)
      keep = std::min(
          keep, static_cast<std::size_t>(std::ceil(fraction_ * static_cast<double>(n_scored))));
    // Unscored points are kept: only a score can say a point is not worth measuring.
    std::vector<std::size_t> kept(order_.begin(),
                                  order_.begin() + static_cast<std::ptrdiff_t>(keep));
    kept.insert(kept.end(), order_.begin() + static_cast<std::ptrdiff_t>(n_scored), order_.end());
    order_ = std::move(kept);
    floor_bound_ = floor_ > 0 && prior.floor_seconds > 0 ? floor_ * prior.floor_seconds : 0;
  }

  std::vector<std::size_t> propose(const Enumeration&, const History& history, std::size_t max,
                                   Rng&) override {
    std::vector<std::size_t> out;
    // One at a time while a floor can stop it, so no point is measured past the stop.
    if (floor_bound_ > 0) {
      if (const Evaluation* best = history.best(); best && best->value <= floor_bound_) return out;
      max = 1;
    }
    while (next_ < order_.size() && out.size() < max) {
      const std::size_t i = order_[next_++];
      if (!history.evaluated(i)) out.push_back(i);
    }
    return out;
  }

 private:
  std::size_t top_;
  double fraction_;
  double floor_;
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
  double floor_bound_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_model(StrategyOptions& options) {
  const std::size_t top = options.count("top", 0, 1, std::size_t{1} << 40);  // absent: all
  const double fraction = options.number("fraction", 1, 1e-9, 1);
  const double floor = options.number("floor", 0, 0, 1e9);
  return std::make_unique<ModelStrategy>(top, fraction, floor);
}

}  // namespace tunekit::detail
