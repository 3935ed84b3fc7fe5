// libFuzzer target for the Kernel Tuner cache reader (outside data: recorded spaces, files
// given to import-kt and replay; plain JSON, the T4 reader behind the same entry point too).
// Property: Recording::load either throws a UsageError naming the file or yields a recording
// whose export reads back to the same configurations, statuses and best — or the export says
// clearly why it cannot (UsageError), never a silent loss.
#include <cstddef>
#include <cstdint>

#include "fuzz_file.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"

namespace {

// What a Kernel Tuner cache can say about a failure: three markers (a T4 file says more).
tunekit::Status kt_class(tunekit::Status s) {
  using tunekit::Status;
  return s == Status::ok || s == Status::compile_failed || s == Status::rejected
             ? s
             : Status::launch_failed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& file = tunekit::fuzz::write_input(data, size, "_kt.json");
  tunekit::Recording r;
  try {
    r = tunekit::Recording::load(file);
  } catch (const tunekit::UsageError&) {
    return 0;
  }
  if (r.size() != r.space().size()) __builtin_trap();
  if (const auto best = r.best()) {
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r.result(i).status == tunekit::Status::ok &&
          r.result(i).time_ms < r.result(*best).time_ms)
        __builtin_trap();
  }
  std::string text;
  try {
    text = tunekit::kernel_tuner_cache_json(r);
  } catch (const tunekit::UsageError&) {
    return 0;
  }
  const auto& back_file = tunekit::fuzz::write_input(
      reinterpret_cast<const std::uint8_t*>(text.data()), text.size(), "_kt.json");
  const tunekit::Recording back = tunekit::Recording::load(back_file);
  if (back.size() != r.size()) __builtin_trap();
  for (std::size_t i = 0; i < r.size(); ++i) {
    const auto j = back.space().index_of(r.space().config(i));
    if (!j || kt_class(back.result(*j).status) != kt_class(r.result(i).status)) __builtin_trap();
  }
  return 0;
}
