// libFuzzer target for the constraint-expression parser (outside data: T1 space files,
// Space::constraint strings). Property: parse either throws a UsageError (ParseError, with the
// position) or yields an expression that evaluates, for integer and string bindings, to a
// value or a UsageError (division by zero, a string in arithmetic) and nothing else.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "space/constraint_expression.hpp"
#include "tunekit/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tunekit::detail::ConstraintExpression e;
  try {
    e = tunekit::detail::ConstraintExpression::parse(text);
  } catch (const tunekit::UsageError&) {
    return 0;
  }
  for (const tunekit::Value& bound :
       {tunekit::Value(0), tunekit::Value(3), tunekit::Value(-7), tunekit::Value(2.5),
        tunekit::Value("s"), tunekit::Value(true)}) {
    std::vector<const tunekit::Value*> values(e.names().size(), &bound);
    try {
      (void)e.test(values);
    } catch (const tunekit::UsageError&) {
    }
  }
  return 0;
}
