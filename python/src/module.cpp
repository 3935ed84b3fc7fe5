// tunekit._tunekit: the native half of the tunekit Python package (python/tunekit/).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "python_op.hpp"
#include "tunekit/errors.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

Tolerance tolerance_of(double abs, double rel) {
  Tolerance t;
  t.abs = abs;
  t.rel = rel;
  return t;
}

// The collector's view of an _Op: the callables it holds (see PythonOp::traverse).
int traverse_op(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  return nb::inst_ptr<PythonOp>(self)->traverse(visit, arg);
}

int clear_op(PyObject* self) {
  if (nb::inst_ready(self)) nb::inst_ptr<PythonOp>(self)->clear();
  return 0;
}

PyType_Slot op_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(traverse_op)},
                          {Py_tp_clear, reinterpret_cast<void*>(clear_op)},
                          {0, nullptr}};

}  // namespace

void register_python_op(nb::module_& m) {
  nb::class_<PythonOp>(m, "_Op", nb::type_slots(op_slots))
      .def(
          "__init__",
          [](PythonOp* self, std::string name, int schema, std::string description, nb::object key,
             nb::object inputs, int input_sets, nb::object reference, int reference_version,
             double abs, double rel) {
            PythonOpSpec spec{
                std::move(name),       schema,     std::move(description), std::move(key),
                std::move(inputs),     input_sets, std::move(reference),   reference_version,
                tolerance_of(abs, rel)};
            new (self) PythonOp(spec);
          },
          nb::arg("name"), nb::arg("schema"), nb::arg("description"), nb::arg("key").none(),
          nb::arg("inputs").none(), nb::arg("input_sets"), nb::arg("reference").none(),
          nb::arg("reference_version"), nb::arg("abs"), nb::arg("rel"))
      .def("add_candidate", &PythonOp::add_candidate, nb::arg("name"), nb::arg("fn"),
           nb::arg("numerics"), nb::arg("version"))
      .def("set_default", &PythonOp::set_default, nb::arg("name"))
      .def_prop_ro("candidates", &PythonOp::candidate_names)
      .def_prop_ro("name", [](const PythonOp& op) { return op.op().name(); })
      .def_prop_ro("checksum", [](const PythonOp& op) { return op.op().checksum().hex(); });
}

}  // namespace tunekit::python

NB_MODULE(_tunekit, m) {
  using namespace tunekit;
  // tunekit.UsageError (a ValueError) says what to do instead; tunekit.Error (a RuntimeError)
  // is a fatal failure: a device lost, a broken invariant. Both are defined in Python.
  nb::module_ errors = nb::module_::import_("tunekit._errors");
  // Leaked on purpose: the translator may run until the interpreter is gone.
  static PyObject* usage_error = nb::object(errors.attr("UsageError")).release().ptr();
  static PyObject* fatal_error = nb::object(errors.attr("Error")).release().ptr();
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (python::PythonInterrupt& e) {
      e.error().restore();  // the KeyboardInterrupt (or SystemExit) as it was raised
    } catch (const UsageError& e) {
      PyErr_SetString(usage_error, e.what());
    } catch (const FatalError& e) {
      PyErr_SetString(fatal_error, e.what());
    }
  });
  python::register_python_op(m);
  python::register_tuner(m);
  python::register_tools(m);
}
