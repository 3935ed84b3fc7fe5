// Device profiles as JSON files: written atomically, read with an error that names the file
// and the field at fault.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/safe_file.hpp"
#include "tunekit/cost_model.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

using OrderedJson = nlohmann::ordered_json;
constexpr std::string_view kProfileFormat = "tunekit-device-profile";
constexpr int kProfileVersion = 1;
// A profile is a few dozen numbers: 1 MiB is generous (docs/formats.md).
constexpr std::size_t kProfileMaxBytes = std::size_t{1} << 20;

struct EstimateField {
  const char* name;
  Estimate Envelope::*member;
};
constexpr EstimateField kEstimates[] = {
    {"peak_flops_1", &Envelope::peak_flops_1},     {"peak_flops_all", &Envelope::peak_flops_all},
    {"dram_bw_1", &Envelope::dram_bw_1},           {"dram_bw_all", &Envelope::dram_bw_all},
    {"cache_bw_1", &Envelope::cache_bw_1},         {"cache_bytes", &Envelope::cache_bytes},
    {"launch_seconds", &Envelope::launch_seconds},
};

// Reads fields of one JSON object; every complaint names the file and the field's path.
class Reader {
 public:
  Reader(std::string_view origin, const OrderedJson& j, std::string path)
      : origin_(origin), j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "must be an object");
  }
  [[noreturn]] void fail(std::string_view field, std::string_view what) const {
    std::string where = path_;
    if (!field.empty()) where += (where.empty() ? "" : ".") + std::string(field);
    throw UsageError("device profile " + std::string(origin_) + ": field '" + where + "' " +
                     std::string(what) + "; recreate it with 'tunekit calibrate --out FILE'");
  }
  const OrderedJson& at(const char* field) const {
    auto it = j_.find(field);
    if (it == j_.end()) fail(field, "is missing");
    return *it;
  }
  Reader object(const char* field) const {
    return Reader(origin_, at(field), path_.empty() ? field : path_ + "." + field);
  }
  std::string text(const char* field) const {
    const OrderedJson& v = at(field);
    if (!v.is_string()) fail(field, "must be a string, not " + v.dump());
    return v.get<std::string>();
  }
  double number(const char* field, double lo, double hi) const {
    const OrderedJson& v = at(field);
    if (!v.is_number()) fail(field, "must be a number, not " + v.dump());
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) {
      std::ostringstream range;
      range << "must lie in [" << lo << ", " << hi << "], not " << v.dump();
      fail(field, range.str());
    }
    return x;
  }
  int integer(const char* field, int lo, int hi) const {
    const OrderedJson& v = at(field);
    if (!v.is_number_integer()) fail(field, "must be an integer, not " + v.dump());
    const auto x = v.get<std::int64_t>();
    if (x < lo || x > hi) {
      fail(field,
           "must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not " + v.dump());
    }
    return static_cast<int>(x);
  }
  bool boolean(const char* field) const {
    const OrderedJson& v = at(field);
    if (!v.is_boolean()) fail(field, "must be true or false, not " + v.dump());
    return v.get<bool>();
  }

 private:
  std::string_view origin_;
  const OrderedJson& j_;
  std::string path_;
};

}  // namespace

std::string DeviceProfile::to_json() const {
  OrderedJson j;
  j["format"] = kProfileFormat;
  j["version"] = kProfileVersion;
  j["device"] = {{"backend", backend},
                 {"vendor", vendor},
                 {"product", product},
                 {"architecture", architecture},
                 {"compute_units", compute_units},
                 {"digest", device_digest}};
  OrderedJson e = OrderedJson::object();
  for (const auto& f : kEstimates)
    e[f.name] = {{"value", (envelope.*f.member).value}, {"spread", (envelope.*f.member).spread}};
  e["threads"] = envelope.threads;
  e["simd_lanes"] = envelope.simd_lanes;
  e["fma_chains"] = envelope.fma_chains;
  j["envelope"] = std::move(e);
  j["calibration"] = {
      {"quick", quick}, {"seconds", calibration_seconds}, {"created_at", created_at}};
  return j.dump(2) + "\n";
}

DeviceProfile DeviceProfile::parse(std::string_view text, std::string_view origin) {
  OrderedJson j;
  try {
    j = OrderedJson::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ParseError("device profile " + std::string(origin) + " is not valid JSON: " + e.what(),
                     e.byte);
  }
  const Reader root(origin, j, "");
  if (root.text("format") != kProfileFormat)
    root.fail("format", "must be \"" + std::string(kProfileFormat) + "\"");
  const int version = root.integer("version", 1, 1 << 20);
  if (version > kProfileVersion) {
    root.fail("version", "is " + std::to_string(version) + ", newer than this tunekit reads (" +
                             std::to_string(kProfileVersion) + ")");
  }
  DeviceProfile p;
  const Reader device = root.object("device");
  p.backend = device.text("backend");
  p.vendor = device.text("vendor");
  p.product = device.text("product");
  p.architecture = device.text("architecture");
  p.compute_units = device.integer("compute_units", 0, 1 << 24);
  p.device_digest = device.text("digest");
  const Reader env = root.object("envelope");
  for (const auto& f : kEstimates) {
    const Reader e = env.object(f.name);
    (p.envelope.*f.member).value = e.number("value", 0, 1e30);
    (p.envelope.*f.member).spread = e.number("spread", 0, 1e30);
  }
  p.envelope.threads = env.integer("threads", 1, 1 << 24);
  p.envelope.simd_lanes = env.integer("simd_lanes", 1, 1 << 16);
  p.envelope.fma_chains = env.integer("fma_chains", 1, 1 << 16);
  const Reader cal = root.object("calibration");
  p.quick = cal.boolean("quick");
  p.calibration_seconds = cal.number("seconds", 0, 1e9);
  p.created_at = static_cast<std::int64_t>(cal.number("created_at", 0, 1e15));
  return p;
}

DeviceProfile read_profile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    throw UsageError("device profile " + path +
                     " does not exist; create one with 'tunekit calibrate --out " + path + "'");
  }
  return DeviceProfile::parse(detail::read_outside_file(path, kProfileMaxBytes, "device profile"),
                              path);
}

std::string write_profile(const std::string& path, const DeviceProfile& profile) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) detail::make_private_directories(target.parent_path());
  // A fresh exclusive temp name per write: two calibrations of one profile at once never write
  // into each other's temp file; the rename makes the last one win whole.
  detail::write_file_atomically(target, profile.to_json(), "device profile");
  return target.string();
}

std::string profile_path(const std::string& dir, std::string_view device_digest) {
  return (std::filesystem::path(dir) / (std::string(device_digest) + ".json")).string();
}

}  // namespace tunekit
