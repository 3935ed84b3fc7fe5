// The built-in tunable operations, by name (the CLI lists and tunes these).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"

namespace tunekit {

struct CatalogEntry {
  std::string name;
  std::string description;
  std::string example_shape;  // e.g. "m=256,n=256,k=256"
  std::function<std::unique_ptr<OpBase>(cpu::ThreadPool& pool)> make;
};

const std::vector<CatalogEntry>& builtin_ops();
// The entry for a name; a UsageError listing the known names otherwise.
const CatalogEntry& find_builtin_op(std::string_view name);

}  // namespace tunekit
