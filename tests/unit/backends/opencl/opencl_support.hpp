// Shared by the OpenCL tests: the device they run on, or a skip (reported as SKIPPED by ctest)
// when no OpenCL platform exists.
#pragma once

#include <memory>

#include <gtest/gtest.h>

#include "tunekit/opencl.hpp"

namespace tunekit::testing {

// One context per test process (opening a PoCL device costs a few milliseconds; sharing it
// also shares its program cache, which the tests account for). Null without a platform.
inline std::shared_ptr<opencl::Context> opencl_context() {
  static const std::shared_ptr<opencl::Context> context =
      opencl::list_devices().empty() ? nullptr : opencl::Context::open("");
  return context;
}

}  // namespace tunekit::testing

// Skips the test (GTEST_SKIP) when there is no OpenCL platform; otherwise binds `name`.
#define TUNEKIT_OPENCL_CONTEXT_OR_SKIP(name)                                                 \
  const std::shared_ptr<tunekit::opencl::Context> name = tunekit::testing::opencl_context(); \
  if (!name) GTEST_SKIP() << "no OpenCL platform (install pocl-opencl-icd)"
