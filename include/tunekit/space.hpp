// Parameter spaces (DESIGN §6 "Large spaces"): typed parameters with value lists, constraints
// over subsets of them (checked as soon as all their parameters are bound, ATF-style, so an
// invalid prefix is pruned before its suffixes are built), and the enumeration of the valid
// configurations: count, index <-> config, uniform sampling without replacement, neighbours.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/value.hpp"

namespace tunekit {

namespace detail {
class ConstraintExpression;
}

// Every random choice in tunekit takes one of these, seeded by the caller.
using Rng = std::mt19937_64;

struct Parameter {
  std::string name;
  std::vector<Value> values;
};

// A condition over some parameters. Either an expression in the Kernel Tuner / T1 dialect
// (Python semantics: == != < <= > >= + - * / // % ** and or not, parentheses, chained
// comparisons like `32 <= a * b <= 1024`) or a C++ predicate.
class Constraint {
 public:
  using Predicate = std::function<bool(std::span<const Value* const>)>;

  // Parses the expression; a bad one is a ParseError naming the byte offset. The parameters
  // are the names the expression uses, in order of first use. An evaluation error (division by
  // zero, a string in arithmetic) makes the constraint false.
  static Constraint expression(std::string_view text);
  // A predicate over the named parameters; it receives their values in that order.
  static Constraint predicate(std::vector<std::string> parameters, Predicate test,
                              std::string description = "<predicate>");

  const std::vector<std::string>& parameters() const { return parameters_; }
  const std::string& text() const { return text_; }
  // values[i] is the value of parameters()[i].
  bool test(std::span<const Value* const> values) const;

 private:
  std::vector<std::string> parameters_;
  std::string text_;
  std::shared_ptr<const detail::ConstraintExpression> expression_;
  Predicate predicate_;
};

enum class Neighbourhood {
  hamming,   // any other value of one parameter
  adjacent,  // one parameter moved to the next or previous value in its list
};

class Enumeration;

// Bounds of Space::enumerate: a space past either is a UsageError that says so (a file or a
// caller can declare any size; the answer must be an error, not bad_alloc or a hang).
struct EnumerationLimits {
  std::size_t max_points = std::size_t{1} << 26;  // valid configurations kept (67 M)
  std::uint64_t max_visits = 400'000'000;         // partial configurations checked (seconds)
};

// The definition of a space. Cheap to build and copy; enumerate() does the work.
class Space {
 public:
  // A parameter and its values, in order. A duplicate name or an empty list is a UsageError.
  Space& param(std::string name, std::vector<Value> values);
  // A constraint expression (ParseError with the position when malformed). Every name in it
  // must be a parameter declared before or after; enumerate() checks.
  Space& constraint(std::string_view expression);
  Space& constraint(Constraint constraint);

  const std::vector<Parameter>& parameters() const { return parameters_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  // Product of the value-list sizes (as a double: it may not fit in an integer).
  double cartesian_size() const;
  // Whether a config names exactly the space's parameters, with listed values, and passes
  // every constraint.
  bool valid(const Config& config) const;

  // Every valid configuration, depth-first in parameter order: constraints are checked as soon
  // as their last parameter is bound. A constraint naming an unknown parameter is a UsageError.
  Enumeration enumerate(const EnumerationLimits& limits = {}) const;

 private:
  std::vector<Parameter> parameters_;
  std::vector<Constraint> constraints_;
};

// The valid points of a space, sorted lexicographically by value index (the enumeration
// order). A point is one value index per parameter. Copies share the parameter table.
class Enumeration {
 public:
  Enumeration() = default;
  // From explicit points (row-major, one value index per parameter); sorted, duplicates
  // dropped. An index outside its parameter's list is a UsageError.
  static Enumeration from_points(std::vector<Parameter> parameters,
                                 std::vector<std::uint32_t> flat_points);

  const std::vector<Parameter>& parameters() const { return *parameters_; }
  std::size_t size() const { return width_ == 0 ? 0 : points_.size() / width_; }
  std::size_t width() const { return width_; }
  std::span<const std::uint32_t> point(std::size_t index) const;
  Config config(std::size_t index) const;
  // nullopt when the config is not a valid point (or names other parameters).
  std::optional<std::size_t> index_of(const Config& config) const;
  std::optional<std::size_t> index_of_point(std::span<const std::uint32_t> point) const;
  // Valid points at distance one under the neighbourhood, in ascending index order.
  std::vector<std::size_t> neighbours(std::size_t index, Neighbourhood kind) const;
  // `count` distinct indices drawn uniformly (in draw order). count > size() is a UsageError.
  std::vector<std::size_t> sample(std::size_t count, Rng& rng) const;

 private:
  std::shared_ptr<const std::vector<Parameter>> parameters_ =
      std::make_shared<const std::vector<Parameter>>();
  std::vector<std::uint32_t> points_;
  std::size_t width_ = 0;
};

// Reads a T1 space file (`ConfigurationSpace.TuningParameters` and `.Conditions`). Values may
// be a JSON list or a Python list literal in a string. Errors are UsageErrors naming the file.
Space read_t1_space(const std::filesystem::path& file);

}  // namespace tunekit
