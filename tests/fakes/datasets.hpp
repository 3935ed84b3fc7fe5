// The shared recorded GPU spaces (../shared/datasets): tests that read them skip when the
// folder is absent (a checkout without the shared folder).
#pragma once

#include <filesystem>

#include <gtest/gtest.h>

#ifndef TUNEKIT_DATASETS_DIR
#error "TUNEKIT_DATASETS_DIR must name the shared datasets folder"
#endif

namespace tunekit::testing {

inline std::filesystem::path datasets() {
  return TUNEKIT_DATASETS_DIR;
}

}  // namespace tunekit::testing

#define REQUIRE_DATASETS()                                                           \
  if (!std::filesystem::exists(::tunekit::testing::datasets() / "convolution_milo")) \
  GTEST_SKIP() << "no shared datasets at " << ::tunekit::testing::datasets()
