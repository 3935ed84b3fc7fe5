#include "gil_ref.hpp"

namespace nb = nanobind;

namespace tunekit::python {

GilRef::GilRef(const GilRef& other) {
  if (!other.valid()) return;
  nb::gil_scoped_acquire gil;
  object_ = other.object_;
}

GilRef& GilRef::operator=(const GilRef& other) {
  if (this == &other) return *this;
  nb::gil_scoped_acquire gil;
  object_ = other.object_;
  return *this;
}

GilRef& GilRef::operator=(GilRef&& other) noexcept {
  if (this == &other) return *this;
  reset();
  object_ = std::move(other.object_);  // a steal: no reference count changes
  return *this;
}

GilRef::~GilRef() {
  reset();
}

void GilRef::reset() {
  if (!object_.is_valid()) return;
  // At interpreter exit the GIL can no longer be taken: the reference is then leaked.
  if (!Py_IsInitialized()) {
    object_.release();
    return;
  }
  nb::gil_scoped_acquire gil;
  object_.reset();
}

}  // namespace tunekit::python
