#include "core/device_selection.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "tunekit/errors.hpp"

namespace tunekit::detail {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::size_t select_by_selector(std::span<const SelectableDevice> devices, std::string_view selector,
                               std::string_view backend) {
  auto names = [&] {
    std::string text;
    for (const SelectableDevice& d : devices) text += "\n  " + d.listing;
    return text;
  };
  if (selector.empty()) return 0;
  std::size_t index = 0;
  const char* end = selector.data() + selector.size();
  if (auto [ptr, ec] = std::from_chars(selector.data(), end, index);
      ec == std::errc() && ptr == end) {
    if (index < devices.size()) return index;
    throw UsageError("--device " + std::string(selector) + ": there are " +
                     std::to_string(devices.size()) + " " + std::string(backend) +
                     " device(s):" + names());
  }
  const std::string wanted = lower(selector);
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (lower(devices[i].product).find(wanted) != std::string::npos) return i;
  throw UsageError("--device '" + std::string(selector) + "' matches no " + std::string(backend) +
                   " device name; give an index or a part of a name:" + names());
}

}  // namespace tunekit::detail
