// libFuzzer target: the messages between the host and a trial worker
// (src/isolate/trial_messages.cpp). An answer comes from a process that may have scribbled over
// its own memory, a request or a setup from a host the worker cannot vouch for: decoding must
// never crash, hang or over-read, and answers nullopt rather than trusting a length. The first
// byte picks the decoder. A decoded message encodes to bytes that decode again and encode to the
// very same bytes (the host's functions — evictor, stop, on_call — are flags that a decoded
// request does not carry back, so the first re-encoding is the fixed point).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "isolate/trial_messages.hpp"

namespace {

using namespace tunekit::detail;

template <class Decode>
void round_trip(std::string_view bytes, Decode decode) {
  const auto message = decode(bytes);
  if (!message) return;
  const std::string once = encode(*message);
  const auto again = decode(once);
  if (!again || encode(*again) != once) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0:
      round_trip(bytes, decode_trial_answer);
      break;
    case 1:
      round_trip(bytes, decode_trial_request);
      break;
    default:
      round_trip(bytes, decode_trial_setup);
      break;
  }
  return 0;
}
