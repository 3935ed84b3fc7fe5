#include "python_op.hpp"

#include <stdexcept>

#include "key_convert.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

using Callable = std::shared_ptr<GilRef>;  // shared by the std::function copies the Op keeps

// numpy.array: a copy that is C-contiguous and writable (the tuner poisons outputs in place).
nb::handle numpy_array() {
  static PyObject* array = nb::object(nb::module_::import_("numpy").attr("array")).release().ptr();
  return array;
}

// The element type of a buffer's struct format ("<f", "d", "q"...), nullopt when unsupported.
std::optional<OutputView::Type> element_type(const Py_buffer& buffer) {
  std::string format = buffer.format ? buffer.format : "B";
  if (!format.empty() && std::string("@=<").find(format[0]) != std::string::npos)
    format.erase(0, 1);
  if (format.size() != 1) return std::nullopt;
  const Py_ssize_t size = buffer.itemsize;
  switch (format[0]) {
    case 'f':
      return OutputView::Type::f32;
    case 'd':
      return OutputView::Type::f64;
    case 'e':
      return OutputView::Type::f16;
    case 'i':
    case 'l':
    case 'q':
      if (size == 4) return OutputView::Type::i32;
      if (size == 8) return OutputView::Type::i64;
      return std::nullopt;
    case 'B':
    case '?':
      return OutputView::Type::u8;
    default:
      return std::nullopt;
  }
}

// One returned value as an output the tuner can poison and compare: a view of a writable
// C-contiguous array (a copy when the value is not one: a list, a scalar, a strided view).
bool overlaps(const Py_buffer& buffer, const PyCall& call) {
  const char* begin = static_cast<const char*>(buffer.buf);
  const char* end = begin + buffer.len;
  for (const auto& [first, last] : call.input_memory)
    if (begin < last && first < end) return true;
  return false;
}

OutputView output_of(nb::handle value, std::size_t position, const PyCall& call, nb::list& kept) {
  constexpr int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE;
  nb::object array = nb::borrow(value);
  Py_buffer buffer;
  bool usable = PyObject_GetBuffer(array.ptr(), &buffer, flags) == 0;
  if (!usable) PyErr_Clear();
  if (usable && overlaps(buffer, call)) {
    PyBuffer_Release(&buffer);
    usable = false;
  }
  if (!usable) {
    array = numpy_array()(value);  // a copy
    if (PyObject_GetBuffer(array.ptr(), &buffer, flags) != 0) throw nb::python_error();
  }
  const std::optional<OutputView::Type> type = element_type(buffer);
  const std::string format = buffer.format ? buffer.format : "B";
  OutputView view{buffer.buf, static_cast<std::size_t>(buffer.len / buffer.itemsize),
                  type.value_or(OutputView::Type::u8)};
  PyBuffer_Release(&buffer);  // `kept` holds the array, so the memory stays where it is
  if (!type) {
    throw std::runtime_error("output " + std::to_string(position) + " has the element format '" +
                             format + "': return float32, float64, float16, int32, int64, " +
                             "uint8 or bool arrays");
  }
  kept.append(array);
  return view;
}

void keep_outputs(PyCall& call, nb::object returned) {
  nb::list kept;
  call.views.clear();
  if (nb::isinstance<nb::tuple>(returned) || nb::isinstance<nb::list>(returned)) {
    std::size_t position = 0;
    for (nb::handle item : returned) call.views.push_back(output_of(item, position++, call, kept));
  } else {
    call.views.push_back(output_of(returned, 0, call, kept));
  }
  call.kept = GilRef(std::move(kept));
  call.returned = GilRef(std::move(returned));
}

// "ValueError: bad shape": the exception's type and text, as a classified failure keeps it.
std::string exception_text(nb::python_error& error) {
  nb::handle value = error.value();
  std::string text = nb::cast<std::string>(nb::str(value.type().attr("__name__")));
  const std::string message = nb::cast<std::string>(nb::str(value));
  if (!message.empty()) text += ": " + message;
  return text;
}

// In a catch block: a BaseException that is not an Exception stops whatever tunekit is doing.
void stop_on_interrupt(nb::python_error& error) {
  if (!error.matches(PyExc_Exception)) throw PythonInterrupt(std::move(error));
}

// Calls a Python callable of the op with the call's arguments, the GIL held for the call only.
void call_python(const GilRef& fn, PyCall& call, const std::string& role) {
  nb::gil_scoped_acquire gil;
  if (!fn.valid()) throw std::runtime_error(role + ": its op was cleared by the garbage collector");
  nb::object returned;
  try {
    returned = fn.get()(*call.args.get());
    if (call.live) {
      call.returned = GilRef(std::move(returned));
      return;
    }
    keep_outputs(call, std::move(returned));
  } catch (nb::python_error& error) {
    stop_on_interrupt(error);
    if (call.live) throw;
    throw std::runtime_error(role + " raised " + exception_text(error));
  }
}

// The generator's return value as an argument tuple, with a copy of each array for restore.
PyCall generated_call(nb::object made) {
  nb::tuple args =
      nb::isinstance<nb::tuple>(made) ? nb::borrow<nb::tuple>(made) : nb::make_tuple(made);
  nb::handle ndarray = nb::module_::import_("numpy").attr("ndarray");
  nb::list copies;
  PyCall call;
  for (nb::handle a : args) {
    const bool array = PyObject_IsInstance(a.ptr(), ndarray.ptr()) == 1;
    copies.append(array ? a.attr("copy")() : nb::none());
    Py_buffer buffer;
    if (PyObject_GetBuffer(a.ptr(), &buffer, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();  // not a contiguous buffer: nothing returned can be a view of it
      continue;
    }
    const char* begin = static_cast<const char*>(buffer.buf);
    call.input_memory.emplace_back(begin, begin + buffer.len);
    PyBuffer_Release(&buffer);
  }
  call.args = GilRef(std::move(args));
  call.pristine = GilRef(nb::tuple(copies));
  return call;
}

// Puts each array argument back as it was made (a candidate may have written into it).
void restore_arguments(PyCall& call) {
  if (!call.pristine.valid()) return;
  nb::gil_scoped_acquire gil;
  // The next candidate starts from nothing returned: the last one's outputs are not poisoned.
  call.views.clear();
  call.kept.reset();
  call.returned.reset();
  nb::handle copyto = nb::module_::import_("numpy").attr("copyto");
  nb::tuple args = nb::borrow<nb::tuple>(call.args.get());
  nb::tuple pristine = nb::borrow<nb::tuple>(call.pristine.get());
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!pristine[i].is_none()) copyto(args[i], pristine[i]);
}

}  // namespace

PythonInterrupt::PythonInterrupt(nb::python_error error)
    : FatalError(std::string("interrupted by ") + error.what()), error_(std::move(error)) {}

PythonOp::PythonOp(const PythonOpSpec& spec) : op_(spec.name, spec.schema_version) {
  if (spec.key.is_none()) throw UsageError("op '" + spec.name + "' needs a key function");
  op_.describe(spec.description)
      .in_process("its candidates are Python callables: they run in this interpreter")
      .tolerance(spec.tolerance)
      .reference_version(spec.reference_version)
      .outputs([](PyCall& call) { return call.views; })
      .restore(restore_arguments);
  Callable key = hold(spec.key);
  op_.key([key](const PyCall& call) {
    nb::gil_scoped_acquire gil;
    if (!key->valid()) throw UsageError("the key function: its op was cleared by the collector");
    try {
      return python_op_key(key->get()(*call.args.get()));
    } catch (nb::python_error& error) {
      stop_on_interrupt(error);
      throw;
    }
  });
  if (!spec.reference.is_none()) {
    Callable reference = hold(spec.reference);
    op_.reference([reference](PyCall& call) { call_python(*reference, call, "the reference"); });
  }
  if (!spec.inputs.is_none()) {
    Callable inputs = hold(spec.inputs);
    auto make = [inputs](const Key& key, int input_set, int sets) {
      nb::gil_scoped_acquire gil;
      if (!inputs->valid()) throw UsageError("the inputs: its op was cleared by the collector");
      try {
        nb::object made = sets == 2 ? inputs->get()(key_to_dict(key), input_set)
                                    : inputs->get()(key_to_dict(key));
        return generated_call(std::move(made));
      } catch (nb::python_error& error) {
        stop_on_interrupt(error);
        throw std::runtime_error("the inputs generator raised " + exception_text(error));
      }
    };
    if (spec.input_sets == 2)
      op_.inputs([make](const Key& key, int input_set) { return make(key, input_set, 2); });
    else
      op_.inputs([make](const Key& key) { return make(key, 0, 1); });
  }
}

void PythonOp::add_candidate(const std::string& name, nb::object fn, const std::string& numerics,
                             int version) {
  const std::optional<Numerics> policy = numerics_from_string(numerics);
  if (!policy) {
    throw UsageError("candidate '" + name + "': unknown numerics '" + numerics +
                     "': use bitwise, reassociates or approximate");
  }
  if (op_.find(name))
    throw UsageError("op '" + op_.name() + "' has a candidate '" + name + "' already");
  Callable callable = hold(std::move(fn));
  Candidate c;
  c.name = name;
  c.version = version;
  c.numerics = *policy;
  op_.candidate(std::move(c), [callable, name](PyCall& call) {
    call_python(*callable, call, "candidate '" + name + "'");
  });
}

// Checked when the tuner first asks for the default (the candidates may come later, by
// decorator): a name that is not a candidate is a UsageError then.
void PythonOp::set_default(const std::string& name) {
  op_.default_candidate(name);
}

std::shared_ptr<GilRef> PythonOp::hold(nb::object fn) {
  held_.push_back(std::make_shared<GilRef>(std::move(fn)));
  return held_.back();
}

int PythonOp::traverse(visitproc visit, void* arg) const {
  for (const auto& held : held_) Py_VISIT(held->ptr());
  return 0;
}

// Breaks a cycle the collector found: the op's callables are dropped (a call after this, which
// only a finaliser could make, raises instead of running them).
void PythonOp::clear() {
  for (const auto& held : held_) held->reset();
}

std::vector<std::string> PythonOp::candidate_names() const {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < op_.size(); ++i) names.push_back(op_.candidate(i).name);
  return names;
}

}  // namespace tunekit::python
