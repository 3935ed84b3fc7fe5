// The recorded GPU spaces the tests read, kept in the repository under data/ (see
// data/README.md; TUNEKIT_DATASETS_DIR names that folder). Tests carry their data: a test
// that needs these files FAILS when one is missing, naming the path; it never skips.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#ifndef TUNEKIT_DATASETS_DIR
#error "TUNEKIT_DATASETS_DIR must name the repository's data/ folder"
#endif

namespace tunekit::testing {

inline std::filesystem::path datasets() {
  return TUNEKIT_DATASETS_DIR;
}

// Every file under data/ that a test or bench reads; "" when all are there, else one line per
// missing path.
inline std::string missing_datasets() {
  static const char* const kFiles[] = {
      "convolution_milo/A100.json.gz",   "convolution_milo/A4000.json.gz",
      "convolution_milo/MI250X.json.gz", "convolution_milo/W6600.json.gz",
      "dedispersion_milo/A100.json.gz",  "dedispersion_milo/W7800.json.gz",
      "gemm_clblast/RTX_Titan.json.gz",  "spaces/convolution_milo.json",
      "spaces/dedispersion_milo.json",   "spaces/gemm_milo.json",
  };
  std::string missing;
  for (const char* f : kFiles) {
    const std::filesystem::path p = datasets() / f;
    if (!std::filesystem::is_regular_file(p)) missing += "\n  missing dataset file: " + p.string();
  }
  return missing;
}

}  // namespace tunekit::testing

// Fails the current test (fatally) when a recorded space under data/ is missing.
#define REQUIRE_DATASETS()                                                                        \
  do {                                                                                            \
    const std::string tunekit_missing_ = ::tunekit::testing::missing_datasets();                  \
    ASSERT_TRUE(tunekit_missing_.empty())                                                         \
        << "the recorded spaces must be in the repository (data/README.md):" << tunekit_missing_; \
  } while (false)
