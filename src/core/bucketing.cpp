#include "tunekit/bucketing.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kLargestPow2 = std::int64_t{1} << 62;

Bucket own(std::int64_t v) {
  return {v, v};
}

Bucket pow2_bucket(std::int64_t v) {
  if (v <= 0 || v > kLargestPow2) return own(v);
  const auto upper = static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(v)));
  return {upper == 1 ? 1 : upper / 2 + 1, upper};
}

Bucket multiple_bucket(std::int64_t v, std::int64_t n) {
  // Truncating division already rounds a negative quotient up (towards zero).
  std::int64_t q = v / n;
  if (v % n > 0) ++q;
  std::int64_t upper = 0;
  if (__builtin_mul_overflow(q, n, &upper)) return own(v);
  std::int64_t lower = 0;
  if (__builtin_sub_overflow(upper, n - 1, &lower)) lower = kMin;
  return {lower, upper};
}

Bucket range_bucket(std::int64_t v, const std::vector<std::int64_t>& bounds) {
  const auto it = std::lower_bound(bounds.begin(), bounds.end(), v);
  if (it == bounds.end()) return own(v);
  // The bound below is strictly smaller (ascending), so +1 cannot overflow.
  return {it == bounds.begin() ? kMin : *(it - 1) + 1, *it};
}

}  // namespace

Bucketing::Bucketing(Kind kind, std::int64_t step, std::vector<std::int64_t> bounds)
    : kind_(kind), step_(step), bounds_(std::move(bounds)) {}

Bucketing Bucketing::pow2() {
  return Bucketing(Kind::pow2, 1, {});
}

Bucketing Bucketing::multiple_of(std::int64_t n) {
  if (n <= 0) {
    throw UsageError("Bucketing::multiple_of(" + std::to_string(n) +
                     "): the step must be a positive integer (e.g. 64)");
  }
  return Bucketing(Kind::multiple_of, n, {});
}

Bucketing Bucketing::ranges(std::vector<std::int64_t> upper_bounds) {
  if (upper_bounds.empty()) {
    throw UsageError("Bucketing::ranges: give at least one upper bound (e.g. {64, 256, 1024})");
  }
  for (std::size_t i = 1; i < upper_bounds.size(); ++i) {
    if (upper_bounds[i] <= upper_bounds[i - 1]) {
      throw UsageError("Bucketing::ranges: upper bounds must be strictly ascending, but " +
                       std::to_string(upper_bounds[i]) + " follows " +
                       std::to_string(upper_bounds[i - 1]));
    }
  }
  return Bucketing(Kind::ranges, 1, std::move(upper_bounds));
}

Bucket Bucketing::bucket(std::int64_t value) const {
  switch (kind_) {
    case Kind::pow2:
      return pow2_bucket(value);
    case Kind::multiple_of:
      return multiple_bucket(value, step_);
    case Kind::ranges:
      return range_bucket(value, bounds_);
  }
  return own(value);
}

std::string Bucketing::text() const {
  switch (kind_) {
    case Kind::pow2:
      return "pow2";
    case Kind::multiple_of:
      return "multiple_of:" + std::to_string(step_);
    case Kind::ranges: {
      std::string out = "ranges:";
      for (std::size_t i = 0; i < bounds_.size(); ++i)
        out += (i ? "," : "") + std::to_string(bounds_[i]);
      return out;
    }
  }
  return {};
}

}  // namespace tunekit
