// surrogate: Thompson sampling over an additive model of the objective, with local steps.
//
// The model: log(objective) ~ sum over parameters of an effect per (parameter, value) — one-hot
// features, plus the cost model's log score (and an "unscored" indicator) when the op has a
// model — fitted by Bayesian linear regression (prior N(0, tau2) per effect, noise sigma2, on
// the standardised target). Before fitting, the target is clipped at its `clip` quantile: the
// model is asked which values make a point good, not how bad the bad ones are (a heavy tail of
// slow points otherwise decides the effects, and on the recorded GPU spaces the fastest region
// is often not where the median is best). Failed points are data: they enter at the worst
// observed log value plus 0.5 (so they are clipped like any bad point); hopeless readings enter
// at their value.
//
// Each proposal draws one coefficient vector from the posterior (Thompson sampling: exploration
// where the model is unsure, for free) and proposes the unevaluated point it predicts best —
// with probability `local`, among the unevaluated neighbours of the `top` best points and
// uniform crossovers of the best five (the model ranks values, the neighbourhood supplies the
// interactions an additive model cannot); otherwise over the whole space (a random sample of
// 20000 points when it is larger). The first points are the shared initial design
// (initial_design.hpp): the default, the model's best-ranked points, then value coverage,
// sized by the budget.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/initial_design.hpp"
#include "search/strategies.hpp"

namespace tunekit::detail {
namespace {

constexpr std::size_t kGlobalCap = 20000;

struct SurrogateOptions {
  std::size_t init = 0;       // 0: design_size(budget, 20)
  double local = 0.8;         // the most probability of a local step
  std::size_t delay = 50;     // no local step before this many evaluations
  std::size_t horizon = 300;  // the probability reaches `local` here (or at the budget)
  double rho = 0.5;           // weight of the neighbours' residuals
  double clip = 0.3;
  double tau2 = 1, sigma2 = 0.25;
  std::size_t top = 3;
  bool shape = true;  // shared features of numeric parameters
  std::size_t batch = 1;
};

class SurrogateStrategy final : public Strategy {
 public:
  explicit SurrogateStrategy(const SurrogateOptions& o)
      : init_(o.init),
        local_(o.local),
        delay_(o.delay),
        horizon_(o.horizon),
        rho_(o.rho),
        clip_(o.clip),
        tau2_(o.tau2),
        sigma2_(o.sigma2),
        top_(o.top),
        shape_(o.shape),
        batch_(o.batch) {}

  std::string_view name() const override { return "surrogate"; }

  void start(const Enumeration& space, const SearchPrior& prior) override {
    prior_ = prior;
    const std::vector<Parameter>& params = space.parameters();
    offset_.assign(params.size() + 1, 0);
    for (std::size_t g = 0; g < params.size(); ++g)
      offset_[g + 1] = offset_[g] + (params[g].values.size() > 1 ? params[g].values.size() : 0);
    width_ = offset_.back();
    // The cost model's view as one more feature: log score standardised over the scored
    // points, 0 with an "unscored" indicator where the model cannot score a point.
    model_.clear();
    std::vector<double> logs;
    for (double s : prior.model_seconds)
      if (std::isfinite(s) && s > 0) logs.push_back(std::log(s));
    if (logs.size() >= 2 && prior.model_seconds.size() == space.size()) {
      const double mean =
          std::accumulate(logs.begin(), logs.end(), 0.0) / static_cast<double>(logs.size());
      double var = 0;
      for (double l : logs) var += (l - mean) * (l - mean);
      const double sd = std::sqrt(var / static_cast<double>(logs.size()));
      model_.resize(space.size());
      for (std::size_t i = 0; i < space.size(); ++i) {
        const double s = prior.model_seconds[i];
        model_[i] = std::isfinite(s) && s > 0 && sd > 0 ? (std::log(s) - mean) / sd : kUnscored;
      }
      width_ += 2;
    }
    // Shared features of numeric parameters, so that what is learnt about some values carries
    // over to the others: the (log-)value's position in its range, and for integers whether
    // the value is a power of two (work-group and tile sizes that match the hardware's).
    shared_.clear();
    for (std::size_t g = 0; shape_ && g < params.size(); ++g) {
      const std::vector<Value>& values = params[g].values;
      const bool numeric =
          values.size() >= 3 && std::all_of(values.begin(), values.end(), [](const Value& v) {
            return v.is_integer() || v.is_real();
          });
      if (!numeric) continue;
      const bool positive =
          std::all_of(values.begin(), values.end(), [](const Value& v) { return v.as_real() > 0; });
      std::vector<double> x;
      for (const Value& v : values) x.push_back(positive ? std::log2(v.as_real()) : v.as_real());
      const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
      if (*hi > *lo) {
        const double a = *lo, span = *hi - *lo;
        for (double& v : x) v = (v - a) / span - 0.5;
        shared_.push_back({g, width_++, x});
      }
      const bool integer =
          std::all_of(values.begin(), values.end(), [](const Value& v) { return v.is_integer(); });
      if (!integer) continue;
      std::vector<double> pow2;
      for (const Value& v : values) {
        const std::int64_t i = v.as_int();
        pow2.push_back(i > 0 && (i & (i - 1)) == 0 ? 0.5 : -0.5);
      }
      const auto [plo, phi] = std::minmax_element(pow2.begin(), pow2.end());
      if (*phi > *plo) shared_.push_back({g, width_++, pow2});
    }
    gram_.assign(width_ * width_, 0.0);
    fitted_ = 0;
    around_.clear();
    design_.clear();
    designed_ = false;
  }

  std::vector<std::size_t> propose(const Enumeration& space, const History& history,
                                   std::size_t max, Rng& rng) override {
    if (offset_.empty()) start(space, prior_);  // search() without start(): no prior
    if (!designed_) {
      designed_ = true;
      const std::size_t want = init_ ? init_ : design_size(prior_.budget_evaluations, 20);
      const std::size_t have = history.size();
      if (want > have) design_ = initial_design(space, history, prior_, want - have, rng);
      std::reverse(design_.begin(), design_.end());
    }
    std::vector<std::size_t> out;
    while (!design_.empty() && out.size() < max) {
      if (!history.evaluated(design_.back())) out.push_back(design_.back());
      design_.pop_back();
    }
    if (!out.empty()) return out;
    std::size_t finite = 0;
    for (const Evaluation& e : history.evaluations()) finite += std::isfinite(e.value) ? 1 : 0;
    if (finite < 2) {  // nothing to learn from yet: sample
      if (const std::optional<std::size_t> i = random_unevaluated(history, rng)) return {*i};
      return {};
    }
    fit(space, history);
    for (std::size_t b = 0; b < std::min(max, batch_); ++b) {
      const std::vector<double> beta = sample(rng);
      std::uniform_real_distribution<double> u(0.0, 1.0);
      std::optional<std::size_t> pick;
      if (u(rng) < local_probability(history))
        pick = best_of(space, beta, local_pool(space, history, rng), history, out);
      if (!pick) pick = best_of(space, beta, global_pool(space, history, rng), history, out);
      if (!pick) break;
      out.push_back(*pick);
    }
    return out;
  }

 private:
  static constexpr double kUnscored = 1e300;

  // Local steps start after `delay` evaluations and become likelier up to `local` at
  // min(budget, horizon): small budgets are spent on the model's global picks, which find the
  // good region fastest; large ones refine around the best points.
  double local_probability(const History& history) const {
    const double k = static_cast<double>(history.size()), delay = static_cast<double>(delay_);
    double end = static_cast<double>(horizon_);
    if (prior_.budget_evaluations)
      end = std::min(end, static_cast<double>(*prior_.budget_evaluations));
    if (k < delay || end <= delay) return 0.0;
    return local_ * std::min(1.0, (k - delay) / (end - delay));
  }

  // The feature vector of a point as (column, value) pairs.
  void features(const Enumeration& space, std::size_t index,
                std::vector<std::pair<std::size_t, double>>& f) const {
    f.clear();
    const std::span<const std::uint32_t> p = space.point(index);
    for (std::size_t g = 0; g < p.size(); ++g)
      if (offset_[g + 1] > offset_[g]) f.emplace_back(offset_[g] + p[g], 1.0);
    for (const Shared& sh : shared_) f.emplace_back(sh.column, sh.table[p[sh.parameter]]);
    if (!model_.empty()) {
      const double m = model_[index];
      if (m == kUnscored)
        f.emplace_back(offset_.back() + 1, 1.0);
      else
        f.emplace_back(offset_.back(), m);
    }
  }

  double predict(const Enumeration& space, const std::vector<double>& beta,
                 std::size_t index) const {
    const std::span<const std::uint32_t> p = space.point(index);
    double y = 0;
    for (std::size_t g = 0; g < p.size(); ++g)
      if (offset_[g + 1] > offset_[g]) y += beta[offset_[g] + p[g]];
    for (const Shared& sh : shared_) y += beta[sh.column] * sh.table[p[sh.parameter]];
    if (!model_.empty()) {
      const double m = model_[index];
      y += m == kUnscored ? beta[offset_.back() + 1] : m * beta[offset_.back()];
    }
    return y;
  }

  void fit(const Enumeration& space, const History& history) {
    const std::vector<Evaluation>& list = history.evaluations();
    std::vector<std::pair<std::size_t, double>> f;
    for (; fitted_ < list.size(); ++fitted_) {  // X^T X grows by one outer product per point
      features(space, list[fitted_].index, f);
      for (const auto& [a, va] : f)
        for (const auto& [b, vb] : f) gram_[a * width_ + b] += va * vb;
    }
    // Target: log values (values when some are not positive), failures at the worst + 0.5,
    // clipped at the `clip` quantile, standardised.
    bool positive = true;
    double worst = -std::numeric_limits<double>::infinity();
    for (const Evaluation& e : list)
      if (std::isfinite(e.value)) positive = positive && e.value > 0;
    std::vector<double> y(list.size());
    for (std::size_t k = 0; k < list.size(); ++k) {
      const double v = list[k].value;
      y[k] =
          std::isfinite(v) ? (positive ? std::log(v) : v) : std::numeric_limits<double>::infinity();
      if (std::isfinite(y[k])) worst = std::max(worst, y[k]);
    }
    for (double& v : y)
      if (!std::isfinite(v)) v = worst + 0.5;
    // The `clip` quantile, interpolated between order statistics.
    std::vector<double> sorted = y;
    std::sort(sorted.begin(), sorted.end());
    const double at = clip_ * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(at);
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double cap = sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
    double mean = 0;
    for (double& v : y) mean += (v = std::min(v, cap));
    mean /= static_cast<double>(y.size());
    double var = 0;
    for (double v : y) var += (v - mean) * (v - mean);
    const double sd = std::sqrt(var / static_cast<double>(y.size()));
    const double scale = sd > 1e-12 ? 1.0 / sd : 1.0;
    std::vector<double> rhs(width_, 0.0);
    target_.assign(list.size(), 0.0);
    for (std::size_t k = 0; k < list.size(); ++k) {
      features(space, list[k].index, f);
      target_[k] = (y[k] - mean) * scale;
      const double t = target_[k] / sigma2_;
      for (const auto& [a, va] : f) rhs[a] += va * t;
    }
    // Posterior precision A = X^T X / sigma2 + I / tau2 = L L^T; mean A^-1 X^T t / sigma2.
    chol_.assign(width_ * width_, 0.0);
    for (std::size_t i = 0; i < width_; ++i)
      for (std::size_t j = 0; j <= i; ++j)
        chol_[i * width_ + j] = gram_[i * width_ + j] / sigma2_ + (i == j ? 1.0 / tau2_ : 0.0);
    for (std::size_t j = 0; j < width_; ++j) {
      double d = chol_[j * width_ + j];
      for (std::size_t k = 0; k < j; ++k) d -= chol_[j * width_ + k] * chol_[j * width_ + k];
      d = std::sqrt(std::max(d, 1e-12));
      chol_[j * width_ + j] = d;
      for (std::size_t i = j + 1; i < width_; ++i) {
        double s = chol_[i * width_ + j];
        for (std::size_t k = 0; k < j; ++k) s -= chol_[i * width_ + k] * chol_[j * width_ + k];
        chol_[i * width_ + j] = s / d;
      }
    }
    mean_ = rhs;
    for (std::size_t i = 0; i < width_; ++i) {  // L z = rhs
      double s = mean_[i];
      for (std::size_t k = 0; k < i; ++k) s -= chol_[i * width_ + k] * mean_[k];
      mean_[i] = s / chol_[i * width_ + i];
    }
    solve_upper(mean_);  // L^T m = z
    smooth_residuals(space, history);
  }

  // What the additive model misses, spread to the neighbours: each evaluated point's residual
  // (target minus posterior-mean prediction) averaged over the evaluated Hamming neighbours of
  // every point, shrunk toward 0 as acc / (count + 1). Interactions show up as residuals, and
  // near a point that is better than the model says, the neighbours likely are too.
  void smooth_residuals(const Enumeration& space, const History& history) {
    if (rho_ <= 0) return;
    const std::vector<Evaluation>& list = history.evaluations();
    while (around_.size() < list.size())
      around_.push_back(space.neighbours(list[around_.size()].index, Neighbourhood::hamming));
    correction_.assign(space.size(), 0.0);
    std::vector<float> count(space.size(), 0.0f);
    for (std::size_t k = 0; k < list.size(); ++k) {
      const double r = target_[k] - predict(space, mean_, list[k].index);
      for (std::size_t j : around_[k]) {
        correction_[j] += r;
        count[j] += 1.0f;
      }
    }
    for (std::size_t j = 0; j < space.size(); ++j) correction_[j] /= count[j] + 1.0;
  }

  void solve_upper(std::vector<double>& v) const {
    for (std::size_t i = width_; i-- > 0;) {
      double s = v[i];
      for (std::size_t k = i + 1; k < width_; ++k) s -= chol_[k * width_ + i] * v[k];
      v[i] = s / chol_[i * width_ + i];
    }
  }

  // One draw from the posterior: m + L^-T z.
  std::vector<double> sample(Rng& rng) const {
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> z(width_);
    for (double& v : z) v = normal(rng);
    solve_upper(z);
    for (std::size_t i = 0; i < width_; ++i) z[i] += mean_[i];
    return z;
  }

  std::vector<std::size_t> local_pool(const Enumeration& space, const History& history,
                                      Rng& rng) const {
    std::vector<const Evaluation*> ranked;
    for (const Evaluation& e : history.evaluations())
      if (std::isfinite(e.value)) ranked.push_back(&e);
    const std::size_t keep = std::min<std::size_t>(std::max<std::size_t>(top_, 5), ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep),
                      ranked.end(), [](const Evaluation* a, const Evaluation* b) {
                        return a->value != b->value ? a->value < b->value : a->index < b->index;
                      });
    ranked.resize(keep);
    std::vector<std::size_t> pool;
    for (std::size_t k = 0; k < std::min(top_, ranked.size()); ++k)
      for (std::size_t j :
           unevaluated_neighbours(space, history, ranked[k]->index, Neighbourhood::hamming))
        pool.push_back(j);
    if (ranked.size() >= 2) {
      std::uniform_int_distribution<std::size_t> parent(0, ranked.size() - 1);
      std::uniform_int_distribution<int> coin(0, 1);
      std::vector<std::uint32_t> child(space.width());
      for (int c = 0; c < 20; ++c) {
        const std::span<const std::uint32_t> a = space.point(ranked[parent(rng)]->index);
        const std::span<const std::uint32_t> b = space.point(ranked[parent(rng)]->index);
        for (std::size_t g = 0; g < child.size(); ++g) child[g] = coin(rng) ? a[g] : b[g];
        if (const std::optional<std::size_t> i = space.index_of_point(child))
          if (!history.evaluated(*i)) pool.push_back(*i);
      }
    }
    return pool;
  }

  std::vector<std::size_t> global_pool(const Enumeration& space, const History& history,
                                       Rng& rng) const {
    std::vector<std::size_t> pool;
    if (space.size() <= kGlobalCap) {
      for (std::size_t i = 0; i < space.size(); ++i)
        if (!history.evaluated(i)) pool.push_back(i);
      return pool;
    }
    for (std::size_t k = 0; k < kGlobalCap; ++k)
      if (const std::optional<std::size_t> i = random_unevaluated(history, rng)) pool.push_back(*i);
    return pool;
  }

  // The pool's point with the lowest prediction that is neither evaluated nor in `taken`;
  // ties go to the lower index.
  std::optional<std::size_t> best_of(const Enumeration& space, const std::vector<double>& beta,
                                     const std::vector<std::size_t>& pool, const History& history,
                                     const std::vector<std::size_t>& taken) const {
    std::optional<std::size_t> best;
    double best_y = std::numeric_limits<double>::infinity();
    for (std::size_t i : pool) {
      if (history.evaluated(i) || std::find(taken.begin(), taken.end(), i) != taken.end()) continue;
      const double y = predict(space, beta, i) + (rho_ > 0 ? rho_ * correction_[i] : 0.0);
      if (!best || y < best_y || (y == best_y && i < *best)) {
        best = i;
        best_y = y;
      }
    }
    return best;
  }

  std::size_t init_;
  double local_;
  std::size_t delay_, horizon_;
  double rho_, clip_, tau2_, sigma2_;
  std::size_t top_;
  bool shape_;
  std::size_t batch_;
  SearchPrior prior_;
  // Features: one-hot (parameter, value) columns from offset_[g]; then the cost model's two
  // columns when there is a model; then the shared features.
  std::vector<std::size_t> offset_;
  std::size_t width_ = 0;
  std::vector<double> model_;
  struct Shared {
    std::size_t parameter, column;
    std::vector<double> table;  // per value index
  };
  std::vector<Shared> shared_;
  std::vector<double> gram_, chol_, mean_;  // X^T X, the posterior precision's factor, mean
  std::size_t fitted_ = 0;                  // evaluations in gram_
  std::vector<double> target_, correction_;
  std::vector<std::vector<std::size_t>> around_;  // neighbours of the k-th evaluation
  std::vector<std::size_t> design_;               // still to propose, last first
  bool designed_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_surrogate(StrategyOptions& options) {
  SurrogateOptions o;
  o.init = options.count("init", 0, 0, 100000);
  o.local = options.number("local", o.local, 0.0, 1.0);
  o.delay = options.count("delay", o.delay, 0, std::size_t{1} << 30);
  o.horizon = options.count("horizon", o.horizon, 1, std::size_t{1} << 30);
  o.rho = options.number("rho", o.rho, 0.0, 10.0);
  o.clip = options.number("clip", o.clip, 0.01, 1.0);
  o.tau2 = options.number("tau2", o.tau2, 1e-6, 1e6);
  o.sigma2 = options.number("sigma2", o.sigma2, 1e-6, 1e6);
  o.top = options.count("top", o.top, 1, 1000);
  o.shape = options.count("shape", 1, 0, 1) == 1;
  o.batch = options.count("batch", o.batch, 1, 1024);
  return std::make_unique<SurrogateStrategy>(o);
}

}  // namespace tunekit::detail
