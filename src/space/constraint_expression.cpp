#include "space/constraint_expression.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

#include "tunekit/errors.hpp"

namespace tunekit::detail {

namespace {

enum class Tok { number, string, name, op, lparen, rparen, end };

struct Token {
  Tok kind = Tok::end;
  std::string text;
  std::size_t position = 0;
  Value value;
};

bool is_identifier_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

Token number_token(std::string_view text, std::size_t& i) {
  const std::size_t start = i;
  bool real = false;
  while (i < text.size() && is_digit(text[i])) ++i;
  if (i < text.size() && text[i] == '.') {
    real = true;
    ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    if (j < text.size() && is_digit(text[j])) {
      real = true;
      i = j;
      while (i < text.size() && is_digit(text[i])) ++i;
    }
  }
  if (i < text.size() && is_identifier_char(text[i]))
    throw ParseError("malformed number '" + std::string(text.substr(start, i + 1 - start)) + "'",
                     start);
  const std::string lexeme(text.substr(start, i - start));
  Token t{Tok::number, lexeme, start, Value()};
  if (real) {
    // from_chars, not stod: an out-of-range literal (1e999) is a ParseError, not an escaping
    // std::out_of_range (found by tests/fuzz/constraint_expression_fuzz).
    double v = 0;
    const auto [end, ec] = std::from_chars(lexeme.data(), lexeme.data() + lexeme.size(), v);
    if (ec != std::errc() || end != lexeme.data() + lexeme.size())
      throw ParseError("real '" + lexeme + "' is out of range for a 64-bit float", start);
    t.value = Value(v);
  } else {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(lexeme.data(), lexeme.data() + lexeme.size(), v);
    if (ec != std::errc() || end != lexeme.data() + lexeme.size())
      throw ParseError("integer '" + lexeme + "' does not fit in 64 bits", start);
    t.value = Value(v);
  }
  return t;
}

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (is_digit(c) || (c == '.' && i + 1 < text.size() && is_digit(text[i + 1]))) {
      out.push_back(number_token(text, i));
    } else if (is_identifier_start(c)) {
      const std::size_t start = i;
      while (i < text.size() && is_identifier_char(text[i])) ++i;
      out.push_back({Tok::name, std::string(text.substr(start, i - start)), start, Value()});
    } else if (c == '\'' || c == '"') {
      const std::size_t start = i++;
      std::string s;
      while (i < text.size() && text[i] != c) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        s += text[i++];
      }
      if (i >= text.size()) throw ParseError("unterminated string", start);
      ++i;
      out.push_back({Tok::string, s, start, Value(s)});
    } else if (c == '(' || c == ')') {
      out.push_back({c == '(' ? Tok::lparen : Tok::rparen, std::string(1, c), i, Value()});
      ++i;
    } else {
      static constexpr std::string_view two[] = {"==", "!=", "<=", ">=", "//", "**"};
      bool matched = false;
      for (std::string_view op : two) {
        if (text.substr(i, 2) == op) {
          out.push_back({Tok::op, std::string(op), i, Value()});
          i += 2;
          matched = true;
          break;
        }
      }
      if (matched) continue;
      if (std::string_view("<>+-*/%").find(c) == std::string_view::npos)
        throw ParseError(std::string("unexpected character '") + c + "'", i);
      out.push_back({Tok::op, std::string(1, c), i, Value()});
      ++i;
    }
  }
  out.push_back({Tok::end, "", text.size(), Value()});
  return out;
}

}  // namespace

class ExpressionParser {
 public:
  explicit ExpressionParser(std::string_view text) : tokens_(tokenize(text)) {}

  ConstraintExpression run() {
    if (tokens_.front().kind == Tok::end) throw ParseError("empty expression", 0);
    out_.root_ = or_expr();
    if (peek().kind != Tok::end)
      throw ParseError("unexpected '" + peek().text + "' after a complete expression",
                       peek().position);
    return std::move(out_);
  }

 private:
  using Op = ConstraintExpression::Op;
  using Cmp = ConstraintExpression::Cmp;

  const Token& peek() const { return tokens_[pos_]; }
  bool is_op(std::string_view op) const { return peek().kind == Tok::op && peek().text == op; }
  bool is_word(std::string_view w) const { return peek().kind == Tok::name && peek().text == w; }

  // Hostile input (a T1 file is outside data) must not exhaust the stack: the parser's
  // recursion and the tree's depth (which the evaluator recurses over) are both bounded.
  // 200000 nested '(' or "not not ..." overflowed the stack before this guard.
  static constexpr std::size_t kMaxDepth = 256;

  struct Nesting {
    explicit Nesting(ExpressionParser& p) : parser(p) {
      if (++parser.nesting_ > kMaxDepth)
        throw ParseError("expression nested deeper than " + std::to_string(kMaxDepth) + " levels",
                         parser.peek().position);
    }
    ~Nesting() { --parser.nesting_; }
    ExpressionParser& parser;
  };

  std::size_t add(ConstraintExpression::Node node) {
    std::size_t depth = 1;
    for (std::size_t c : node.children) depth = std::max(depth, depth_[c] + 1);
    if (depth > kMaxDepth)
      throw ParseError("expression nested deeper than " + std::to_string(kMaxDepth) + " levels",
                       peek().position);
    out_.nodes_.push_back(std::move(node));
    depth_.push_back(depth);
    return out_.nodes_.size() - 1;
  }
  std::size_t binary(Op op, std::size_t a, std::size_t b) {
    ConstraintExpression::Node n;
    n.op = op;
    n.children = {a, b};
    return add(std::move(n));
  }

  std::size_t or_expr() {
    std::size_t left = and_expr();
    while (is_word("or")) {
      ++pos_;
      left = binary(Op::logical_or, left, and_expr());
    }
    return left;
  }
  std::size_t and_expr() {
    std::size_t left = not_expr();
    while (is_word("and")) {
      ++pos_;
      left = binary(Op::logical_and, left, not_expr());
    }
    return left;
  }
  std::size_t not_expr() {
    if (is_word("not")) {
      const Nesting guard(*this);
      ++pos_;
      ConstraintExpression::Node n;
      n.op = Op::logical_not;
      n.children = {not_expr()};
      return add(std::move(n));
    }
    return compare();
  }
  std::optional<Cmp> comparison() const {
    if (peek().kind != Tok::op) return std::nullopt;
    const std::string& t = peek().text;
    if (t == "==") return Cmp::eq;
    if (t == "!=") return Cmp::ne;
    if (t == "<") return Cmp::lt;
    if (t == "<=") return Cmp::le;
    if (t == ">") return Cmp::gt;
    if (t == ">=") return Cmp::ge;
    return std::nullopt;
  }
  std::size_t compare() {
    const std::size_t first = sum();
    if (!comparison()) return first;
    ConstraintExpression::Node n;
    n.op = Op::compare;
    n.children.push_back(first);
    while (const std::optional<Cmp> c = comparison()) {
      ++pos_;
      n.cmp.push_back(*c);
      n.children.push_back(sum());
    }
    return add(std::move(n));
  }
  std::size_t sum() {
    std::size_t left = product();
    while (is_op("+") || is_op("-")) {
      const Op op = peek().text == "+" ? Op::add : Op::subtract;
      ++pos_;
      left = binary(op, left, product());
    }
    return left;
  }
  std::size_t product() {
    std::size_t left = unary();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string& t = peek().text;
      const Op op = t == "*"    ? Op::multiply
                    : t == "/"  ? Op::divide
                    : t == "//" ? Op::floor_divide
                                : Op::modulo;
      ++pos_;
      left = binary(op, left, unary());
    }
    return left;
  }
  std::size_t unary() {
    if (is_op("-") || is_op("+")) {
      const Nesting guard(*this);
      const Op op = peek().text == "-" ? Op::negate : Op::plus;
      ++pos_;
      ConstraintExpression::Node n;
      n.op = op;
      n.children = {unary()};
      return add(std::move(n));
    }
    return power();
  }
  std::size_t power() {
    const std::size_t base = atom();
    if (is_op("**")) {
      const Nesting guard(*this);
      ++pos_;
      return binary(Op::power, base, unary());
    }
    return base;
  }
  std::size_t atom() {
    const Token& t = peek();
    ConstraintExpression::Node n;
    switch (t.kind) {
      case Tok::number:
      case Tok::string:
        n.literal = t.value;
        ++pos_;
        return add(std::move(n));
      case Tok::name: {
        if (t.text == "True" || t.text == "False") {
          n.literal = Value(t.text == "True");
          ++pos_;
          return add(std::move(n));
        }
        if (t.text == "and" || t.text == "or" || t.text == "not")
          throw ParseError("expected a value, found '" + t.text + "'", t.position);
        n.op = Op::name;
        std::vector<std::string>& names = out_.names_;
        std::size_t index = 0;
        while (index < names.size() && names[index] != t.text) ++index;
        if (index == names.size()) names.push_back(t.text);
        n.name = index;
        ++pos_;
        return add(std::move(n));
      }
      case Tok::lparen: {
        const Nesting guard(*this);
        const std::size_t open = t.position;
        ++pos_;
        const std::size_t inner = or_expr();
        if (peek().kind != Tok::rparen)
          throw ParseError("expected ')' to close the '(' at position " + std::to_string(open),
                           peek().position);
        ++pos_;
        return inner;
      }
      case Tok::end:
        throw ParseError("expression ends where a value was expected", t.position);
      default:
        throw ParseError("expected a value, found '" + t.text + "'", t.position);
    }
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  std::size_t nesting_ = 0;
  std::vector<std::size_t> depth_;  // per node: the depth of its subtree
  ConstraintExpression out_;
};

ConstraintExpression ConstraintExpression::parse(std::string_view text) {
  return ExpressionParser(text).run();
}

namespace {

[[noreturn]] void eval_error(const std::string& what) {
  throw UsageError("constraint evaluation: " + what);
}

bool numeric(const Value& v) {
  return v.is_integer() || v.is_real() || v.is_boolean();
}
bool integral(const Value& v) {
  return v.is_integer() || v.is_boolean();
}
std::int64_t int_of(const Value& v) {
  return v.is_boolean() ? (v.as_bool() ? 1 : 0) : v.as_int();
}
double real_of(const Value& v) {
  return v.is_boolean() ? (v.as_bool() ? 1.0 : 0.0) : v.as_real();
}

bool truthy(const Value& v) {
  switch (v.type()) {
    case Value::Type::integer:
      return v.as_int() != 0;
    case Value::Type::real:
      return v.as_real() != 0.0;
    case Value::Type::string:
      return !v.as_string().empty();
    case Value::Type::boolean:
      return v.as_bool();
  }
  return false;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
std::int64_t py_mod(std::int64_t a, std::int64_t b) {
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double py_fmod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0.0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

Value arithmetic(ConstraintExpression::Op op, const Value& a, const Value& b) {
  using Op = ConstraintExpression::Op;
  if (op == Op::add && a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
  if (!numeric(a) || !numeric(b))
    eval_error("arithmetic on " + a.text() + " and " + b.text() + " (not numbers)");
  if (integral(a) && integral(b) && op != Op::divide) {
    const std::int64_t x = int_of(a);
    const std::int64_t y = int_of(b);
    std::int64_t r = 0;
    switch (op) {
      case Op::add:
        if (__builtin_add_overflow(x, y, &r)) eval_error("integer overflow");
        return Value(r);
      case Op::subtract:
        if (__builtin_sub_overflow(x, y, &r)) eval_error("integer overflow");
        return Value(r);
      case Op::multiply:
        if (__builtin_mul_overflow(x, y, &r)) eval_error("integer overflow");
        return Value(r);
      case Op::floor_divide:
      case Op::modulo:
        if (y == 0) eval_error("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) eval_error("integer overflow");
        return Value(op == Op::modulo ? py_mod(x, y) : floor_div(x, y));
      case Op::power:
        if (y >= 0) {
          // Square and multiply: O(log y). A loop of y multiplications never ended for
          // 1 ** 9223372036854775807 (found by tests/fuzz/constraint_expression_fuzz).
          r = 1;
          std::int64_t base = x;
          for (std::int64_t e = y; e > 0;) {
            if ((e & 1) != 0 && __builtin_mul_overflow(r, base, &r)) eval_error("integer overflow");
            e >>= 1;
            // Still needed for a higher bit of e, so its overflow is the result's overflow.
            if (e > 0 && __builtin_mul_overflow(base, base, &base)) eval_error("integer overflow");
          }
          return Value(r);
        }
        return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      default:
        break;
    }
  }
  const double x = real_of(a);
  const double y = real_of(b);
  switch (op) {
    case Op::add:
      return Value(x + y);
    case Op::subtract:
      return Value(x - y);
    case Op::multiply:
      return Value(x * y);
    case Op::divide:
      if (y == 0.0) eval_error("division by zero");
      return Value(x / y);
    case Op::floor_divide:
      if (y == 0.0) eval_error("division by zero");
      return Value(std::floor(x / y));
    case Op::modulo:
      if (y == 0.0) eval_error("modulo by zero");
      return Value(py_fmod(x, y));
    case Op::power:
      return Value(std::pow(x, y));
    default:
      eval_error("internal: not an arithmetic operator");
  }
}

bool compare(ConstraintExpression::Cmp cmp, const Value& a, const Value& b) {
  using Cmp = ConstraintExpression::Cmp;
  int order = 0;  // -1, 0, 1
  if (numeric(a) && numeric(b)) {
    if (integral(a) && integral(b)) {
      const std::int64_t x = int_of(a);
      const std::int64_t y = int_of(b);
      order = x < y ? -1 : (x > y ? 1 : 0);
    } else {
      const double x = real_of(a);
      const double y = real_of(b);
      if (std::isnan(x) || std::isnan(y)) return cmp == Cmp::ne;
      order = x < y ? -1 : (x > y ? 1 : 0);
    }
  } else if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());
    order = c < 0 ? -1 : (c > 0 ? 1 : 0);
  } else {
    if (cmp == Cmp::eq) return false;
    if (cmp == Cmp::ne) return true;
    eval_error("cannot order " + a.text() + " and " + b.text());
  }
  switch (cmp) {
    case Cmp::eq:
      return order == 0;
    case Cmp::ne:
      return order != 0;
    case Cmp::lt:
      return order < 0;
    case Cmp::le:
      return order <= 0;
    case Cmp::gt:
      return order > 0;
    case Cmp::ge:
      return order >= 0;
  }
  return false;
}

}  // namespace

Value ConstraintExpression::eval(std::size_t index, std::span<const Value* const> values) const {
  const Node& n = nodes_[index];
  switch (n.op) {
    case Op::literal:
      return n.literal;
    case Op::name:
      return *values[n.name];
    case Op::negate: {
      const Value v = eval(n.children[0], values);
      if (integral(v)) {
        const std::int64_t x = int_of(v);
        if (x == INT64_MIN) eval_error("integer overflow");
        return Value(-x);
      }
      if (v.is_real()) return Value(-v.as_real());
      eval_error("cannot negate " + v.text());
    }
    case Op::plus: {
      const Value v = eval(n.children[0], values);
      if (!numeric(v)) eval_error("unary + on " + v.text());
      return v.is_boolean() ? Value(int_of(v)) : v;
    }
    case Op::logical_not:
      return Value(!truthy(eval(n.children[0], values)));
    case Op::logical_and:
      return Value(truthy(eval(n.children[0], values)) && truthy(eval(n.children[1], values)));
    case Op::logical_or:
      return Value(truthy(eval(n.children[0], values)) || truthy(eval(n.children[1], values)));
    case Op::compare: {
      Value left = eval(n.children[0], values);
      for (std::size_t i = 0; i < n.cmp.size(); ++i) {
        Value right = eval(n.children[i + 1], values);
        if (!compare(n.cmp[i], left, right)) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    default:
      return arithmetic(n.op, eval(n.children[0], values), eval(n.children[1], values));
  }
}

Value ConstraintExpression::evaluate(std::span<const Value* const> values) const {
  if (values.size() != names_.size())
    throw UsageError("constraint expression needs " + std::to_string(names_.size()) +
                     " values, got " + std::to_string(values.size()));
  return eval(root_, values);
}

bool ConstraintExpression::test(std::span<const Value* const> values) const {
  return truthy(evaluate(values));
}

}  // namespace tunekit::detail
