#include "tunekit/outcome.hpp"

#include <array>
#include <utility>

namespace tunekit {
namespace {
constexpr std::array<std::pair<Status, std::string_view>, 14> kStatusNames{{
    {Status::ok, "ok"},
    {Status::rejected, "rejected"},
    {Status::compile_failed, "compile_failed"},
    {Status::launch_failed, "launch_failed"},
    {Status::out_of_memory, "out_of_memory"},
    {Status::validation_failed, "validation_failed"},
    {Status::not_measured, "not_measured"},
    {Status::refused, "refused"},
    {Status::timed_out, "timed_out"},
    {Status::stopped, "stopped"},
    {Status::hopeless, "hopeless"},
    {Status::skipped, "skipped"},
    {Status::crashed, "crashed"},
    {Status::device_lost, "device_lost"},
}};
}  // namespace

std::string_view to_string(Status status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return name;
  return "unknown";
}

std::optional<Status> status_from_string(std::string_view name) {
  for (const auto& [s, n] : kStatusNames)
    if (n == name) return s;
  return std::nullopt;
}

}  // namespace tunekit
