// Reference: the expected outputs of a workload and the element-wise comparison.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>

#include "core/classify.hpp"
#include "tunekit/validate.hpp"
#include "validate/output_elements.hpp"

namespace tunekit {
namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// Counts the elements of output `o` that fail, and describes the first in `first` (when
// `first` is still empty).
template <class Want, class Got, class Pass>
std::size_t count_bad(const std::vector<Want>& want, std::size_t o, const Got& got,
                      const Pass& pass, std::string& first) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto value = got(i);
    if (pass(value, want[i])) continue;
    if (bad++ == 0 && first.empty()) {
      if constexpr (std::is_integral_v<Want>) {
        first = "output " + std::to_string(o) + "[" + std::to_string(i) +
                "] = " + std::to_string(value) + ", expected " + std::to_string(want[i]);
      } else {
        first = "output " + std::to_string(o) + "[" + std::to_string(i) + "] = " + number(value) +
                ", expected " + number(want[i]);
      }
    }
  }
  return bad;
}

// The tolerance test of one floating element. Written so that NaN on either side fails, and
// infinity where a finite value is expected too (inf - x is inf, never <= a finite bound).
bool within(double got, double exp, const Tolerance& tol) {
  return std::abs(got - exp) <= tol.abs + tol.rel * std::abs(exp);
}

// True when no element of a floating output fails, checked without describing any: the common
// case (a correct candidate, millions of elements after every timing window) in a loop the
// compiler vectorises.
template <class T, class Want>
bool all_within(const OutputView& view, const std::vector<Want>& want, const Tolerance& tol) {
  const T* got = static_cast<const T*>(view.data);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(got[i]), e = static_cast<double>(want[i]);
    bad += !within(g, e, tol);
  }
  return bad == 0;
}

// The same verdict for float outputs against float expectations, mostly in float: a loop the
// compiler vectorises on the baseline ISA, where the double loop's float-to-double widening is
// not (4M elements: 3.1 -> 0.9 ms, docs/performance.md "Comparing float outputs in float").
// The float test only passes elements the double test passes: with the tolerance shrunk by
// 2^-20 (as floats: at most A(1 - 14u), R(1 - 14u), u = 2^-24), a pass means
// |g - e| <= |fl(g - e)| / (1 - u) <= (A + R|e|)(1 - 14u)(1 + u)^2 / (1 - u) + 2^-149
//         <= (A + R|e|)(1 - 11u) + 2^-149 <= A + R|e|,
// the last step because A >= 2^-100 (so 11u(A + R|e|) > 2^-149, the product's underflow).
// A <= 2^100 and R <= 1 keep the float bound finite; R is 0 or at least 2^-100 (a float). NaN fails
// the float test, an infinite output against a finite expectation too, and an infinite expectation
// passes it only where the double test passes (inf <= inf); a block with any float failure is
// tested again in double. Other tolerances: nullopt (the double loop decides).
std::optional<bool> all_within_in_float(const OutputView& view, const std::vector<float>& want,
                                        const Tolerance& tol) {
  if (view.type != OutputView::Type::f32) return std::nullopt;
  if (!(tol.abs >= 0x1p-100 && tol.abs <= 0x1p100 && (tol.rel == 0 || tol.rel >= 0x1p-100) &&
        tol.rel <= 1))
    return std::nullopt;
  const float shrink = 1 - 0x1p-20f;
  const float a = static_cast<float>(tol.abs) * shrink, r = static_cast<float>(tol.rel) * shrink;
  const float* got = static_cast<const float*>(view.data);
  constexpr std::size_t kBlock = 1024;
  for (std::size_t b = 0; b < want.size(); b += kBlock) {
    const std::size_t n = std::min(kBlock, want.size() - b);
    const float* g = got + b;
    const float* e = want.data() + b;
    int fails = 0;
    for (std::size_t i = 0; i < n; ++i)
      fails |= !(std::fabs(g[i] - e[i]) <= a + r * std::fabs(e[i]));
    if (fails == 0) continue;
    for (std::size_t i = 0; i < n; ++i)
      if (!within(static_cast<double>(g[i]), static_cast<double>(e[i]), tol)) return false;
  }
  return true;
}

// Counts the failing elements of floating output `o` and describes the first: a pass of
// all_within first where the type has a fast path, the element-wise description only after it
// found a failure.
template <class Want>
std::size_t count_bad_floats(const std::vector<Want>& want, std::size_t o, const OutputView& view,
                             const Tolerance& tol, std::string& first) {
  if constexpr (std::is_same_v<Want, float>) {
    if (const std::optional<bool> fast = all_within_in_float(view, want, tol)) {
      if (*fast) return 0;
    } else if (view.type == OutputView::Type::f32 && all_within<float>(view, want, tol)) {
      return 0;
    }
  } else if (view.type == OutputView::Type::f32 && all_within<float>(view, want, tol)) {
    return 0;
  }
  if (view.type == OutputView::Type::f64 && all_within<double>(view, want, tol)) return 0;
  return count_bad(
      want, o, [&](std::size_t i) { return detail::float_element(view, i); },
      [&](double got, double exp) { return within(got, exp, tol); }, first);
}

}  // namespace

void poison(std::span<const OutputView> outputs) {
  for (const auto& v : outputs) detail::poison_view(v);
}

Reference Reference::of(std::span<const OutputView> outputs) {
  Reference r;
  for (const auto& v : outputs) {
    Expected e;
    e.type = v.type;
    if (v.integral()) {
      e.integers.resize(v.count);
      for (std::size_t i = 0; i < v.count; ++i) e.integers[i] = detail::integer_element(v, i);
    } else if (v.type == OutputView::Type::f32) {
      const float* data = static_cast<const float*>(v.data);
      e.singles.assign(data, data + v.count);
    } else {
      e.floats.resize(v.count);
      for (std::size_t i = 0; i < v.count; ++i) e.floats[i] = detail::float_element(v, i);
    }
    r.outputs_.push_back(std::move(e));
  }
  return r;
}

Reference Reference::capture(Workload& workload, bool has_reference, std::size_t fallback_index) {
  poison(workload.outputs());
  // The reference sees what a candidate sees: poisoned outputs and the op's poison hook.
  workload.before_check();
  if (has_reference) {
    workload.run_reference();
  } else {
    workload.run_candidate(fallback_index);
  }
  return of(workload.outputs());
}

Outcome Reference::compare(std::span<const OutputView> outputs, const Tolerance& tol) const {
  if (outputs.size() != outputs_.size()) {
    return {Status::validation_failed, "the candidate exposes " + std::to_string(outputs.size()) +
                                           " outputs, the reference " +
                                           std::to_string(outputs_.size())};
  }
  std::size_t bad = 0;
  std::string first;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const Expected& want = outputs_[o];
    const OutputView& view = outputs[o];
    if (view.type != want.type) {
      return {Status::validation_failed,
              "output " + std::to_string(o) + " is " + std::string(detail::type_name(view.type)) +
                  ", the reference's " + std::string(detail::type_name(want.type))};
    }
    if (view.count != want.size()) {
      return {Status::validation_failed,
              "output " + std::to_string(o) + " has " + std::to_string(view.count) +
                  " elements, the reference " + std::to_string(want.size())};
    }
    if (view.integral()) {
      bad += count_bad(
          want.integers, o, [&](std::size_t i) { return detail::integer_element(view, i); },
          [](std::int64_t got, std::int64_t exp) { return got == exp; }, first);
    } else if (want.type == OutputView::Type::f32) {
      bad += count_bad_floats(want.singles, o, view, tol, first);
    } else {
      bad += count_bad_floats(want.floats, o, view, tol, first);
    }
  }
  if (bad == 0) return Outcome::success();
  return {Status::validation_failed, std::to_string(bad) + " element(s) outside tolerance (abs " +
                                         number(tol.abs) + ", rel " + number(tol.rel) +
                                         "; integers exact); first: " + first};
}

Outcome Reference::check(Workload& workload, std::size_t index, const Tolerance& tol) const {
  OutputCheck output_check(workload, *this, tol);
  output_check.arm();
  try {
    workload.run_candidate(index);
  } catch (...) {
    return detail::classify_exception(std::current_exception(), "validation run");
  }
  return output_check.verify();
}

}  // namespace tunekit
