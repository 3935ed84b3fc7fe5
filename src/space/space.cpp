#include "tunekit/space.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "space/constraint_expression.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {

Constraint Constraint::expression(std::string_view text) {
  auto parsed = std::make_shared<const detail::ConstraintExpression>(
      detail::ConstraintExpression::parse(text));
  Constraint c;
  c.parameters_ = parsed->names();
  c.text_ = std::string(text);
  c.expression_ = std::move(parsed);
  return c;
}

Constraint Constraint::predicate(std::vector<std::string> parameters, Predicate test,
                                 std::string description) {
  if (!test) throw UsageError("Constraint::predicate needs a callable predicate");
  Constraint c;
  c.parameters_ = std::move(parameters);
  c.text_ = std::move(description);
  c.predicate_ = std::move(test);
  return c;
}

bool Constraint::test(std::span<const Value* const> values) const {
  if (predicate_) return predicate_(values);
  try {
    return expression_->test(values);
  } catch (const UsageError&) {
    return false;  // division by zero, arithmetic on a string: the point is not valid
  }
}

namespace {
// The type and the exact bits of a value (every NaN one key, as == treats them).
std::string exact_key(const Value& v) {
  std::string key(1, static_cast<char>(v.type()));
  auto append = [&](auto x) { key.append(reinterpret_cast<const char*>(&x), sizeof x); };
  switch (v.type()) {
    case Value::Type::integer:
      append(v.as_int());
      break;
    case Value::Type::real:
      append(std::isnan(v.as_real()) ? std::uint64_t{1}
                                     : std::bit_cast<std::uint64_t>(v.as_real()));
      break;
    case Value::Type::string:
      key += v.as_string();
      break;
    case Value::Type::boolean:
      key += v.as_bool() ? '1' : '0';
      break;
  }
  return key;
}
}  // namespace

Space& Space::param(std::string name, std::vector<Value> values) {
  if (name.empty()) throw UsageError("a parameter needs a name");
  if (values.empty()) throw UsageError("parameter '" + name + "' needs at least one value");
  for (const Parameter& p : parameters_)
    if (p.name == name) throw UsageError("parameter '" + name + "' is declared twice");
  // Hashed, not pairwise: a file may list a million values (equal exactly as Value's ==).
  std::unordered_set<std::string> seen;
  seen.reserve(values.size());
  for (const Value& v : values)
    if (!seen.insert(exact_key(v)).second)
      throw UsageError("parameter '" + name + "' lists the value " + v.text() + " twice");
  parameters_.push_back({std::move(name), std::move(values)});
  return *this;
}

Space& Space::constraint(std::string_view expression) {
  return constraint(Constraint::expression(expression));
}

Space& Space::constraint(Constraint c) {
  constraints_.push_back(std::move(c));
  return *this;
}

double Space::cartesian_size() const {
  double n = parameters_.empty() ? 0.0 : 1.0;
  for (const Parameter& p : parameters_) n *= static_cast<double>(p.values.size());
  return n;
}

namespace {

std::size_t parameter_position(const std::vector<Parameter>& parameters, const std::string& name,
                               const Constraint& c) {
  for (std::size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].name == name) return i;
  throw UsageError("constraint '" + c.text() + "' names '" + name +
                   "', which is not a parameter of the space; declare it with Space::param");
}

// A constraint with its parameters resolved to positions, checked at depth `level`.
struct BoundConstraint {
  const Constraint* constraint;
  std::vector<std::size_t> positions;
  std::size_t level;
};

std::vector<BoundConstraint> bind(const std::vector<Parameter>& parameters,
                                  const std::vector<Constraint>& constraints) {
  std::vector<BoundConstraint> out;
  for (const Constraint& c : constraints) {
    BoundConstraint b{&c, {}, 0};
    for (const std::string& name : c.parameters()) {
      b.positions.push_back(parameter_position(parameters, name, c));
      b.level = std::max(b.level, b.positions.back());
    }
    out.push_back(std::move(b));
  }
  return out;
}

bool passes(const BoundConstraint& b, const std::vector<Parameter>& parameters,
            const std::vector<std::uint32_t>& point, std::vector<const Value*>& scratch) {
  scratch.clear();
  for (std::size_t pos : b.positions) scratch.push_back(&parameters[pos].values[point[pos]]);
  return b.constraint->test(scratch);
}

}  // namespace

bool Space::valid(const Config& config) const {
  if (config.size() != parameters_.size()) return false;
  std::vector<std::uint32_t> point(parameters_.size());
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Value* v = config.find(parameters_[i].name);
    if (!v) return false;
    const auto& values = parameters_[i].values;
    const auto it = std::find(values.begin(), values.end(), *v);
    if (it == values.end()) return false;
    point[i] = static_cast<std::uint32_t>(it - values.begin());
  }
  std::vector<const Value*> scratch;
  for (const BoundConstraint& b : bind(parameters_, constraints_))
    if (!passes(b, parameters_, point, scratch)) return false;
  return true;
}

Enumeration Space::enumerate(const EnumerationLimits& limits) const {
  if (parameters_.empty()) throw UsageError("the space has no parameters; add one with param()");
  const std::size_t width = parameters_.size();
  const std::vector<BoundConstraint> bound = bind(parameters_, constraints_);
  std::vector<std::vector<const BoundConstraint*>> at_level(width);
  for (const BoundConstraint& b : bound) at_level[b.level].push_back(&b);

  // Depth-first over parameters in order; a prefix failing a constraint whose parameters are
  // all bound is abandoned with every suffix. The output is sorted by construction.
  std::vector<std::uint32_t> flat;
  std::vector<std::uint32_t> point(width, 0);
  std::vector<const Value*> scratch;
  std::size_t depth = 0;
  point[0] = 0;
  // Bounded: a space whose valid points would not fit in memory, or whose constraints leave
  // more prefixes than can be visited in reasonable time, is a clear error, not bad_alloc or
  // a hang (a file or a user can declare any size).
  std::uint64_t visited = 0;
  auto too_large = [&](const std::string& what) {
    return UsageError(fmt::format(
        "the space is too large to enumerate: {} (the cartesian product has {:.3g} points); "
        "add constraints or fewer values",
        what, cartesian_size()));
  };
  if (constraints_.empty() && cartesian_size() > static_cast<double>(limits.max_points))
    throw too_large(fmt::format("more than {} valid configurations", limits.max_points));
  while (true) {
    if (++visited > limits.max_visits)
      throw too_large(
          fmt::format("more than {} partial configurations visited", limits.max_visits));
    bool ok = point[depth] < parameters_[depth].values.size();
    if (!ok) {
      if (depth == 0) break;
      --depth;
      ++point[depth];
      continue;
    }
    for (const BoundConstraint* b : at_level[depth]) {
      if (!passes(*b, parameters_, point, scratch)) {
        ok = false;
        break;
      }
    }
    if (ok && depth + 1 == width) {
      if (flat.size() / width >= limits.max_points)
        throw too_large(fmt::format("more than {} valid configurations", limits.max_points));
      flat.insert(flat.end(), point.begin(), point.end());
    }
    if (ok && depth + 1 < width) {
      ++depth;
      point[depth] = 0;
    } else {
      ++point[depth];
    }
  }
  return Enumeration::from_points(parameters_, std::move(flat));
}

}  // namespace tunekit
