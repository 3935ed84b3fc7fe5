// Text form shared by Key and Config: "name=value,name=value".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tunekit/value.hpp"

namespace tunekit::detail {

std::string fields_text(const std::vector<Field>& fields);
// ParseError (with the position) on a malformed text or a repeated name.
std::vector<Field> parse_fields(std::string_view text);
// The unquoted canonical text of a value (strings raw), used in encodings.
std::string raw_text(const Value& value);

}  // namespace tunekit::detail
