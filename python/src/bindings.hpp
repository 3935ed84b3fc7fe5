// The parts of the tunekit._tunekit extension module, each registered by its own file.
#pragma once

#include <nanobind/nanobind.h>

namespace tunekit::python {

void register_python_op(nanobind::module_& m);  // python_op.cpp: _Op
void register_tuner(nanobind::module_& m);      // tuner_binding.cpp: _Tuner
void register_tools(nanobind::module_& m);  // tools_binding.cpp: replay, space, calibrate, cache

}  // namespace tunekit::python
