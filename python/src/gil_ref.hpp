// GilRef: a reference to a Python object that tunekit may copy, move and destroy on threads
// that do not hold the GIL (the tuner owns the arguments of a Python op while it searches with
// the GIL released). Copying and destroying take the GIL; moving touches no reference count.
#pragma once

#include <nanobind/nanobind.h>

namespace tunekit::python {

class GilRef {
 public:
  GilRef() = default;
  explicit GilRef(nanobind::object object) : object_(std::move(object)) {}
  GilRef(const GilRef& other);
  GilRef& operator=(const GilRef& other);
  GilRef(GilRef&& other) noexcept = default;
  GilRef& operator=(GilRef&& other) noexcept;
  ~GilRef();

  // Only with the GIL held.
  const nanobind::object& get() const { return object_; }
  // For tp_traverse: the object without a new reference (null when none).
  PyObject* ptr() const { return object_.ptr(); }
  bool valid() const { return object_.is_valid(); }
  void reset();  // takes the GIL

 private:
  nanobind::object object_;
};

}  // namespace tunekit::python
