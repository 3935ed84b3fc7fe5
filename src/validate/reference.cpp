#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "core/classify.hpp"
#include "tunekit/validate.hpp"

namespace tunekit {
namespace {

double read(const OutputView& v, std::size_t i) {
  return v.type == OutputView::Type::f32 ? static_cast<double>(static_cast<const float*>(v.data)[i])
                                         : static_cast<const double*>(v.data)[i];
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

}  // namespace

void poison(std::span<const OutputView> outputs) {
  for (const auto& v : outputs) {
    if (v.type == OutputView::Type::f32) {
      auto* p = static_cast<float*>(v.data);
      for (std::size_t i = 0; i < v.count; ++i) p[i] = std::numeric_limits<float>::quiet_NaN();
    } else {
      auto* p = static_cast<double*>(v.data);
      for (std::size_t i = 0; i < v.count; ++i) p[i] = std::numeric_limits<double>::quiet_NaN();
    }
  }
}

Reference Reference::of(std::span<const OutputView> outputs) {
  Reference r;
  for (const auto& v : outputs) {
    std::vector<double> copy(v.count);
    for (std::size_t i = 0; i < v.count; ++i) copy[i] = read(v, i);
    r.values_.push_back(std::move(copy));
  }
  return r;
}

Reference Reference::capture(Workload& workload, bool has_reference, std::size_t fallback_index) {
  std::vector<OutputView> outs = workload.outputs();
  poison(outs);
  if (has_reference) {
    workload.run_reference();
  } else {
    workload.run_candidate(fallback_index);
  }
  return of(workload.outputs());
}

Outcome Reference::compare(std::span<const OutputView> outputs, const Tolerance& tol) const {
  if (outputs.size() != values_.size()) {
    return {Status::validation_failed, "the candidate exposes " + std::to_string(outputs.size()) +
                                           " outputs, the reference " +
                                           std::to_string(values_.size())};
  }
  std::size_t bad = 0;
  std::string first;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const auto& want = values_[o];
    if (outputs[o].count != want.size()) {
      return {Status::validation_failed,
              "output " + std::to_string(o) + " has " + std::to_string(outputs[o].count) +
                  " elements, the reference " + std::to_string(want.size())};
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      double got = read(outputs[o], i);
      double exp = want[i];
      // Written so that NaN on either side fails the comparison.
      bool pass = std::abs(got - exp) <= tol.abs + tol.rel * std::abs(exp);
      if (!pass) {
        if (bad++ == 0) {
          first = "output " + std::to_string(o) + "[" + std::to_string(i) + "] = " + number(got) +
                  ", expected " + number(exp);
        }
      }
    }
  }
  if (bad == 0) return Outcome::success();
  return {Status::validation_failed, std::to_string(bad) + " element(s) outside tolerance (abs " +
                                         number(tol.abs) + ", rel " + number(tol.rel) +
                                         "); first: " + first};
}

Outcome Reference::check(Workload& workload, std::size_t index, const Tolerance& tol) const {
  std::vector<OutputView> outs = workload.outputs();
  poison(outs);
  try {
    workload.run_candidate(index);
  } catch (...) {
    return detail::classify_exception(std::current_exception(), "validation run");
  }
  return compare(workload.outputs(), tol);
}

}  // namespace tunekit
