// The --device selector every device backend takes: "" the first device, digits an index, else
// a case-insensitive part of the product name. Private to src/.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace tunekit::detail {

// One device as a selector sees it: its product name, and the line that lists it in an error
// ("0: NVIDIA H200 (sm_90)").
struct SelectableDevice {
  std::string product;
  std::string listing;
};

// The index `selector` picks among `devices` (not empty). UsageError naming `backend` ("CUDA")
// and listing the devices when an index is out of range or no name matches.
std::size_t select_by_selector(std::span<const SelectableDevice> devices, std::string_view selector,
                               std::string_view backend);

std::string lower(std::string_view text);

}  // namespace tunekit::detail
