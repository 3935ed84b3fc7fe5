#include "key_convert.hpp"

#include <algorithm>
#include <vector>

#include "tunekit/errors.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

std::string type_text(nb::handle object) {
  return nb::cast<std::string>(
      nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(object.ptr()))).attr("__name__")));
}

std::vector<Field> fields_of(nb::handle shape, const std::string& what) {
  std::vector<Field> fields;
  if (nb::isinstance<nb::str>(shape)) {
    const Key parsed = Key::parse(nb::cast<std::string>(shape));
    fields.assign(parsed.fields().begin(), parsed.fields().end());
    return fields;
  }
  if (!PyMapping_Check(shape.ptr()) || nb::isinstance<nb::list>(shape) ||
      nb::isinstance<nb::tuple>(shape)) {
    throw UsageError(what + " must be a dict {field: value} or a text such as \"m=256,n=256\", " +
                     "not " + type_text(shape));
  }
  nb::object items = nb::steal(PyMapping_Items(shape.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  for (nb::handle item : items) {
    nb::handle name = item[0];
    if (!nb::isinstance<nb::str>(name))
      throw UsageError(what + ": field names are str, not " + type_text(name));
    std::string field = nb::cast<std::string>(name);
    fields.push_back({field, value_from_python(item[1], what + " field '" + field + "'")});
  }
  return fields;
}

}  // namespace

Value value_from_python(nb::handle object, const std::string& what) {
  PyObject* o = object.ptr();
  // bool first: True is an int to Python. NumPy's bool_ is neither, but has __bool__ only.
  if (PyBool_Check(o)) return Value(o == Py_True);
  if (type_text(object) == "bool_" || type_text(object) == "bool")
    return Value(PyObject_IsTrue(o) == 1);
  if (PyLong_Check(o) || (PyIndex_Check(o) && !PyFloat_Check(o))) {
    nb::object index = nb::steal(PyNumber_Index(o));
    if (!index.is_valid()) throw nb::python_error();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0)
      throw UsageError(what + ": " + nb::cast<std::string>(nb::repr(object)) +
                       " does not fit a 64-bit integer");
    return Value(v);
  }
  if (PyFloat_Check(o) ||
      (PyNumber_Check(o) && !PyUnicode_Check(o) && PyObject_HasAttrString(o, "__float__"))) {
    const double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return Value(v);
  }
  if (PyUnicode_Check(o)) return Value(nb::cast<std::string>(object));
  throw UsageError(what + " is a " + type_text(object) +
                   ": a key or config value is an int, float, str or bool");
}

nb::object value_to_python(const Value& value) {
  switch (value.type()) {
    case Value::Type::integer:
      return nb::int_(value.as_int());
    case Value::Type::real:
      return nb::float_(value.as_real());
    case Value::Type::boolean:
      return nb::bool_(value.as_bool());
    case Value::Type::string:
      break;
  }
  return nb::str(value.as_string().c_str(), value.as_string().size());
}

Key python_op_key(nb::handle shape) {
  std::vector<Field> fields = fields_of(shape, "a key");
  std::sort(fields.begin(), fields.end(),
            [](const Field& a, const Field& b) { return a.name < b.name; });
  for (std::size_t i = 1; i < fields.size(); ++i) {
    if (fields[i].name == fields[i - 1].name)
      throw UsageError("a key names the field '" + fields[i].name + "' twice");
  }
  return Key(std::move(fields));
}

Key builtin_key(const OpBase& op, nb::handle shape, const std::string& example_shape) {
  std::string text = shape.is_none()                  ? example_shape
                     : nb::isinstance<nb::str>(shape) ? nb::cast<std::string>(shape)
                                                      : std::string();
  try {
    if (text.empty()) text = Key(fields_of(shape, "shape")).text();
    return op.parse_shape(text);
  } catch (const UsageError& e) {
    std::string fields;
    for (const KeyField& f : op.key_schema()) {
      if (!fields.empty()) fields += ", ";
      fields += f.name + " (" + std::string(to_string(f.type));
      if (f.type == Value::Type::integer)
        fields += ", " + std::to_string(f.min) + ".." + std::to_string(f.max);
      if (f.default_value) fields += ", default " + f.default_value->text();
      fields += ")";
    }
    std::string help = "bad shape '" + text + "' for " + op.name() + ": " + e.what();
    if (!fields.empty()) help += "\n  key fields: " + fields;
    help += "\n  example: shape=\"" + example_shape + "\"";
    throw UsageError(help);
  }
}

nb::dict key_to_dict(const Key& key) {
  nb::dict d;
  for (const Field& f : key.fields()) d[f.name.c_str()] = value_to_python(f.value);
  return d;
}

nb::dict config_to_dict(const Config& config) {
  nb::dict d;
  for (const Field& f : config.fields()) d[f.name.c_str()] = value_to_python(f.value);
  return d;
}

}  // namespace tunekit::python
