#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "tunekit/errors.hpp"
#include "tunekit/space.hpp"

namespace tunekit {

namespace {

bool row_less(const std::uint32_t* a, const std::uint32_t* b, std::size_t width) {
  return std::lexicographical_compare(a, a + width, b, b + width);
}

}  // namespace

Enumeration Enumeration::from_points(std::vector<Parameter> parameters,
                                     std::vector<std::uint32_t> flat_points) {
  const std::size_t width = parameters.size();
  if (width == 0) throw UsageError("an enumeration needs at least one parameter");
  if (flat_points.size() % width != 0)
    throw UsageError("points must hold one value index per parameter (" + std::to_string(width) +
                     " per point)");
  const std::size_t n = flat_points.size() / width;
  for (std::size_t i = 0; i < flat_points.size(); ++i)
    if (flat_points[i] >= parameters[i % width].values.size())
      throw UsageError("value index " + std::to_string(flat_points[i]) + " is outside parameter '" +
                       parameters[i % width].name + "'");

  bool sorted = true;
  for (std::size_t i = 1; i < n && sorted; ++i)
    sorted = row_less(&flat_points[(i - 1) * width], &flat_points[i * width], width);
  Enumeration e;
  e.width_ = width;
  if (sorted) {
    e.points_ = std::move(flat_points);
  } else {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return row_less(&flat_points[a * width], &flat_points[b * width], width);
    });
    e.points_.reserve(flat_points.size());
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint32_t* row = &flat_points[order[k] * width];
      if (k > 0 && std::equal(row, row + width, &flat_points[order[k - 1] * width])) continue;
      e.points_.insert(e.points_.end(), row, row + width);
    }
  }
  e.parameters_ = std::make_shared<const std::vector<Parameter>>(std::move(parameters));
  return e;
}

std::span<const std::uint32_t> Enumeration::point(std::size_t index) const {
  if (index >= size())
    throw UsageError("point index " + std::to_string(index) + " is outside the space of " +
                     std::to_string(size()) + " configurations");
  return {points_.data() + index * width_, width_};
}

Config Enumeration::config(std::size_t index) const {
  const std::span<const std::uint32_t> p = point(index);
  std::vector<Field> fields;
  fields.reserve(width_);
  for (std::size_t i = 0; i < width_; ++i)
    fields.push_back({(*parameters_)[i].name, (*parameters_)[i].values[p[i]]});
  return Config(std::move(fields));
}

std::optional<std::size_t> Enumeration::index_of_point(std::span<const std::uint32_t> p) const {
  if (p.size() != width_) return std::nullopt;
  std::size_t lo = 0;
  std::size_t hi = size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (row_less(points_.data() + mid * width_, p.data(), width_)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < size() && std::equal(p.begin(), p.end(), points_.data() + lo * width_)) return lo;
  return std::nullopt;
}

std::optional<std::size_t> Enumeration::index_of(const Config& config) const {
  if (config.size() != width_) return std::nullopt;
  std::vector<std::uint32_t> p(width_);
  for (std::size_t i = 0; i < width_; ++i) {
    const Parameter& param = (*parameters_)[i];
    const Value* v = config.find(param.name);
    if (!v) return std::nullopt;
    const auto it = std::find(param.values.begin(), param.values.end(), *v);
    if (it == param.values.end()) return std::nullopt;
    p[i] = static_cast<std::uint32_t>(it - param.values.begin());
  }
  return index_of_point(p);
}

std::vector<std::size_t> Enumeration::neighbours(std::size_t index, Neighbourhood kind) const {
  const std::span<const std::uint32_t> base = point(index);
  std::vector<std::uint32_t> p(base.begin(), base.end());
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < width_; ++i) {
    const std::uint32_t own = base[i];
    const auto count = static_cast<std::uint32_t>((*parameters_)[i].values.size());
    auto try_value = [&](std::uint32_t v) {
      p[i] = v;
      if (const std::optional<std::size_t> j = index_of_point(p)) out.push_back(*j);
    };
    if (kind == Neighbourhood::hamming) {
      for (std::uint32_t v = 0; v < count; ++v)
        if (v != own) try_value(v);
    } else {
      if (own > 0) try_value(own - 1);
      if (own + 1 < count) try_value(own + 1);
    }
    p[i] = own;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::size_t> Enumeration::sample(std::size_t count, Rng& rng) const {
  const std::size_t n = size();
  if (count > n)
    throw UsageError("cannot sample " + std::to_string(count) + " distinct configurations from " +
                     std::to_string(n));
  // Partial Fisher-Yates over a virtual identity permutation: O(count) time and memory.
  std::unordered_map<std::size_t, std::size_t> swapped;
  auto at = [&](std::size_t i) {
    const auto it = swapped.find(i);
    return it == swapped.end() ? i : it->second;
  };
  std::vector<std::size_t> out;
  out.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    std::uniform_int_distribution<std::size_t> pick(k, n - 1);
    const std::size_t j = pick(rng);
    const std::size_t vj = at(j);
    swapped[j] = at(k);
    out.push_back(vj);
  }
  return out;
}

}  // namespace tunekit
