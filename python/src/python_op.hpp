// PythonOp: a tunable op whose key function, input generator, reference and candidates are
// Python callables on NumPy arrays. It is a plain tunekit::Op<PyCall>, so the tuner validates,
// times, stores and serves it exactly as it does a C++ op (DESIGN §3, §7).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "gil_ref.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/op.hpp"

namespace tunekit::python {

// One call of a Python op: the positional arguments and what the candidate returned.
struct PyCall {
  GilRef args;      // tuple
  GilRef pristine;  // generated inputs only: a copy of each array argument (None elsewhere)
  GilRef returned;  // the last candidate's (or the reference's) return value, as returned
  GilRef kept;      // list: the writable C-contiguous arrays `views` point into
  std::vector<OutputView> views;
  // Generated inputs only: the memory of each array argument. A returned array that overlaps
  // one is copied before it is kept, so poisoning the outputs never writes into the inputs.
  std::vector<std::pair<const char*, const char*>> input_memory;
  // A caller's call (op(*args)): a candidate's exception reaches the caller as raised, and the
  // return value is not converted. Otherwise (a trial) it is a classified failure with its text.
  bool live = false;
};

// A BaseException that is not an Exception (KeyboardInterrupt, SystemExit) raised inside a
// callback: it stops the search (a FatalError propagates out of every tunekit call) and is
// raised again, as it was, when it reaches Python.
class PythonInterrupt : public FatalError {
 public:
  explicit PythonInterrupt(nanobind::python_error error);
  nanobind::python_error& error() { return error_; }

 private:
  nanobind::python_error error_;
};

struct PythonOpSpec {
  std::string name;
  int schema_version = 1;
  std::string description;
  nanobind::object key;        // (*args) -> dict
  nanobind::object inputs;     // (key) -> args, or (key, input_set) -> args; None: no generator
  int input_sets = 1;          // 2 when inputs takes (key, input_set)
  nanobind::object reference;  // (*args) -> result; None: the default's result is "correct"
  int reference_version = 1;
  Tolerance tolerance;
};

class PythonOp {
 public:
  explicit PythonOp(const PythonOpSpec& spec);
  // numerics: "bitwise" | "reassociates" | "approximate" (UsageError otherwise).
  void add_candidate(const std::string& name, nanobind::object fn, const std::string& numerics,
                     int version);
  // Without one the first candidate is the default.
  void set_default(const std::string& name);

  const Op<PyCall>& op() const { return op_; }
  std::vector<std::string> candidate_names() const;

  // The Python objects the op holds, for the garbage collector: a candidate that refers to
  // its op through a module global is a cycle through C++ (tp_traverse / tp_clear).
  int traverse(visitproc visit, void* arg) const;
  void clear();

 private:
  std::shared_ptr<GilRef> hold(nanobind::object fn);

  Op<PyCall> op_;
  std::vector<std::shared_ptr<GilRef>> held_;
};

}  // namespace tunekit::python
