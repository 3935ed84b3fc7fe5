// Keys and values between Python and tunekit: a key is a dict {field: int | float | str | bool}
// (or the text form "m=256,n=256"), a Config a dict of the same values.
#pragma once

#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/value.hpp"

namespace tunekit::python {

// A Python scalar as a Value: bool, an integer (int or a NumPy integer), a float (float or a
// NumPy floating), or str. Anything else is a UsageError naming `what` and the type.
Value value_from_python(nanobind::handle object, const std::string& what);
nanobind::object value_to_python(const Value& value);

// A Python op's key: the mapping's fields sorted by name, so {"n": 1, "dtype": "f32"} and
// {"dtype": "f32", "n": 1} are one key; a str is parsed as the text form and sorted the same.
Key python_op_key(nanobind::handle shape);

// A built-in op's key: the mapping (in the caller's order) or the text form, read by the op's
// own parser (defaults filled, fields ordered and checked as `tunekit tune --shape` does). A
// bad shape is a UsageError saying which fields the op has and giving its example shape.
Key builtin_key(const OpBase& op, nanobind::handle shape, const std::string& example_shape);

nanobind::dict key_to_dict(const Key& key);
nanobind::dict config_to_dict(const Config& config);

}  // namespace tunekit::python
