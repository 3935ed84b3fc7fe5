// A library loaded at run time (dlopen) and its symbols: the CUDA driver, NVRTC and cuBLAS are
// found when tunekit runs, not when it links, so one binary runs with or without them.
// Private to src/backends/cuda.
#pragma once

#include <dlfcn.h>

#include <memory>
#include <string>
#include <vector>

namespace tunekit::detail {

class SharedLibrary {
 public:
  // Tries each name in order; loaded() tells whether one opened, error() why none did
  // (dlerror's text of each attempt).
  explicit SharedLibrary(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        handle_.reset(h);
        name_ = name;
        return;
      }
      const char* why = dlerror();
      error_ += (error_.empty() ? "" : "; ") + (why ? std::string(why) : name + ": not found");
    }
  }
  bool loaded() const { return handle_ != nullptr; }
  const std::string& name() const { return name_; }
  const std::string& error() const { return error_; }
  // The symbol as a function pointer of type F; nullptr when it is missing.
  template <class F>
  F symbol(const char* name) const {
    return handle_ ? reinterpret_cast<F>(dlsym(handle_.get(), name)) : nullptr;
  }

 private:
  struct Close {
    void operator()(void* h) const { dlclose(h); }
  };
  std::unique_ptr<void, Close> handle_;
  std::string name_;
  std::string error_;
};

}  // namespace tunekit::detail
