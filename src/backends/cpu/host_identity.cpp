// Host identity from hwloc; ISA flags from the compiler's CPU detection. The only place the
// CPU backend looks at the platform.
#include <hwloc.h>

#include <string>
#include <utility>
#include <vector>

#include "tunekit/cpu.hpp"

namespace tunekit::cpu {
namespace {

std::vector<std::string> isa_features() {
  std::vector<std::string> f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const std::pair<const char*, bool> flags[] = {
      {"sse4.2", __builtin_cpu_supports("sse4.2")},
      {"avx", __builtin_cpu_supports("avx")},
      {"avx2", __builtin_cpu_supports("avx2")},
      {"fma", __builtin_cpu_supports("fma")},
      {"avx512f", __builtin_cpu_supports("avx512f")},
      {"avx512bw", __builtin_cpu_supports("avx512bw")},
      {"avx512vl", __builtin_cpu_supports("avx512vl")},
  };
  for (const auto& [name, on] : flags)
    if (on) f.emplace_back(name);
#endif
  return f;
}

std::string info(hwloc_obj_t obj, const char* name) {
  if (!obj) return {};
  const char* v = hwloc_obj_get_info_by_name(obj, name);
  return v ? v : "";
}

std::uint64_t cache_size(hwloc_topology_t topo, hwloc_obj_type_t type, bool data_only) {
  int n = hwloc_get_nbobjs_by_type(topo, type);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t c = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(i));
    if (!data_only || c->attr->cache.type != HWLOC_OBJ_CACHE_INSTRUCTION)
      return c->attr->cache.size;
  }
  return 0;
}

}  // namespace

DeviceIdentity host_identity() {
  DeviceIdentity id;
  id.backend = "cpu";
  id.features = isa_features();
#if defined(__x86_64__)
  id.architecture = "x86_64";
#elif defined(__aarch64__)
  id.architecture = "aarch64";
#endif
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) return id;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return id;
  }
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  hwloc_obj_t package = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  id.vendor = info(package, "CPUVendor");
  id.product = info(package, "CPUModel");
  if (std::string arch = info(root, "Architecture"); !arch.empty()) id.architecture = arch;
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  id.compute_units = cores > 0 ? cores : pus;
  id.memory_bytes = root ? root->total_memory : 0;
  id.l1d_bytes = cache_size(topo, HWLOC_OBJ_L1CACHE, true);
  id.l2_bytes = cache_size(topo, HWLOC_OBJ_L2CACHE, false);
  id.l3_bytes = cache_size(topo, HWLOC_OBJ_L3CACHE, false);
  if (id.l3_bytes == 0) id.l3_bytes = id.l2_bytes;
  id.driver = std::string("hwloc ") + HWLOC_VERSION;
  id.known = !id.product.empty() && id.compute_units > 0;
  hwloc_topology_destroy(topo);
  return id;
}

}  // namespace tunekit::cpu
