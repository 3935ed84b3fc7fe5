// The lookup every built-in catalog (CPU, OpenCL, CUDA) answers find_builtin_op with. Private to
// kernels/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tunekit/errors.hpp"

namespace tunekit::kernels {

// The entry named `name`; otherwise a UsageError "unknown <what> '<name>'; the <plural> are:
// a, b, c".
template <class Entry>
const Entry& find_catalog_entry(const std::vector<Entry>& entries, std::string_view name,
                                std::string_view what, std::string_view plural) {
  std::string known;
  for (const Entry& entry : entries) {
    if (entry.name == name) return entry;
    known += (known.empty() ? "" : ", ") + entry.name;
  }
  throw UsageError("unknown " + std::string(what) + " '" + std::string(name) + "'; the " +
                   std::string(plural) + " are: " + known);
}

}  // namespace tunekit::kernels
