#include "tuner/admission.hpp"

#include <exception>
#include <string>

#include <fmt/format.h>

#include "core/classify.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {

std::optional<Outcome> precheck(const Candidate& cand, const Key& key, Numerics policy) {
  if (cand.numerics > policy) {
    return Outcome{Status::skipped, "numerics class '" + std::string(to_string(cand.numerics)) +
                                        "' is not admitted by the policy '" +
                                        std::string(to_string(policy)) + "'"};
  }
  if (cand.eligible) {
    try {
      if (auto reason = cand.eligible(key)) return Outcome{Status::rejected, *reason};
    } catch (...) {
      return classify_exception(std::current_exception(), "eligibility check", Status::rejected);
    }
  }
  return std::nullopt;
}

namespace {

// "96.0 GiB", "512.0 MiB", "4.0 KiB", "12 bytes".
std::string size_text(double bytes) {
  constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{:.0f} bytes", bytes);
  int unit = -1;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", bytes, units[unit]);
}

}  // namespace

std::optional<std::string> working_set_refusal(const OpBase& op, const Key& key,
                                               const DeviceIdentity& device) {
  if (device.memory_bytes == 0 || !op.has_work_model()) return std::nullopt;
  std::optional<Work> work;
  try {
    work = op.work(key, op.default_index(key));
  } catch (const FatalError&) {
    throw;
  } catch (const std::exception&) {
    return std::nullopt;  // no judgement: the search meets (and classifies) the failure itself
  }
  const auto memory = static_cast<double>(device.memory_bytes);
  if (!work || !(work->compulsory_bytes > memory)) return std::nullopt;
  const std::string where =
      device.product.empty() ? "the device" : "the device (" + device.product + ")";
  return fmt::format("{} {} needs {} of inputs and outputs; {} has {}: choose a smaller shape",
                     op.name(), key.text(), size_text(work->compulsory_bytes), where,
                     size_text(memory));
}

}  // namespace tunekit::detail
