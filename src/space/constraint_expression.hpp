// A parsed constraint expression (the T1 / Kernel Tuner dialect, Python semantics) and its
// evaluator over Values.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/value.hpp"

namespace tunekit::detail {

class ConstraintExpression {
 public:
  // Grammar (Python precedence, lowest first):
  //   or_expr  := and_expr ('or' and_expr)*
  //   and_expr := not_expr ('and' not_expr)*
  //   not_expr := 'not' not_expr | compare
  //   compare  := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)*      chained like Python
  //   sum      := product (('+'|'-') product)*
  //   product  := unary (('*'|'/'|'//'|'%') unary)*
  //   unary    := ('-'|'+') unary | power
  //   power    := atom ('**' unary)?
  //   atom     := number | string | True | False | name | '(' or_expr ')'
  // A malformed expression is a ParseError naming the byte offset.
  static ConstraintExpression parse(std::string_view text);

  // Parameter names in order of first use; evaluate() takes their values in this order.
  const std::vector<std::string>& names() const { return names_; }
  // The value of the expression. Throws UsageError for an evaluation error (division by
  // zero, arithmetic on a string).
  Value evaluate(std::span<const Value* const> values) const;
  // Python truthiness of evaluate().
  bool test(std::span<const Value* const> values) const;

  enum class Op : std::uint8_t {
    literal,
    name,
    negate,
    plus,
    logical_not,
    logical_and,
    logical_or,
    add,
    subtract,
    multiply,
    divide,
    floor_divide,
    modulo,
    power,
    compare,  // chain: children are operands, cmp holds the operators
  };
  enum class Cmp : std::uint8_t { eq, ne, lt, le, gt, ge };
  struct Node {
    Op op = Op::literal;
    Value literal;
    std::size_t name = 0;               // index into names_
    std::vector<std::size_t> children;  // node indices
    std::vector<Cmp> cmp;
  };

 private:
  friend class ExpressionParser;
  Value eval(std::size_t node, std::span<const Value* const> values) const;

  std::vector<Node> nodes_;
  std::size_t root_ = 0;
  std::vector<std::string> names_;
};

}  // namespace tunekit::detail
