// Value <-> JSON with the JSON type kept (an integer stays an integer, "64" stays a string).
// Separate from the umbrella header so that only code that speaks JSON pulls in nlohmann.
#pragma once

#include <nlohmann/json.hpp>

#include "tunekit/value.hpp"

namespace tunekit {

inline nlohmann::ordered_json value_json(const Value& v) {
  switch (v.type()) {
    case Value::Type::integer:
      return v.as_int();
    case Value::Type::real:
      return v.as_real();
    case Value::Type::string:
      return v.as_string();
    case Value::Type::boolean:
      return v.as_bool();
  }
  return nullptr;
}

}  // namespace tunekit
