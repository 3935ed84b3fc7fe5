#include "tunekit/candidate.hpp"

namespace tunekit {

std::string_view to_string(Numerics numerics) {
  switch (numerics) {
    case Numerics::bitwise:
      return "bitwise";
    case Numerics::reassociates:
      return "reassociates";
    case Numerics::approximate:
      return "approximate";
  }
  return "unknown";
}

std::optional<Numerics> numerics_from_string(std::string_view name) {
  for (Numerics n : {Numerics::bitwise, Numerics::reassociates, Numerics::approximate})
    if (to_string(n) == name) return n;
  return std::nullopt;
}

}  // namespace tunekit
