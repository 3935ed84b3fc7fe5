#include "tunekit/trial_worker.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isolate/trial_messages.hpp"
#include "isolate/worker_process.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/validate.hpp"
#include "tuner/trial_runner.hpp"

namespace tunekit {
namespace {

// Rotation copies past this are a damaged setup (the host's default is a handful).
constexpr std::uint32_t kMaxRotation = 256;

// The inputs the host made (SearchContext::prepare_inputs), made again from the same op, key
// and counts.
std::unique_ptr<detail::TrialInputSet> inputs_of(const OpBase& op,
                                                 const detail::TrialSetup& setup) {
  if (setup.input_sets < 1 || setup.input_sets > static_cast<std::uint32_t>(op.input_sets()) ||
      setup.rotation_copies > kMaxRotation)
    throw UsageError("the setup asks for input sets or copies the op does not have");
  const Key key = Key::parse(setup.key);
  auto made = std::make_unique<detail::TrialInputSet>(op, key, static_cast<int>(setup.input_sets),
                                                      static_cast<int>(setup.rotation_copies),
                                                      setup.default_index);
  made->inputs().tolerance = op.tolerance(key);
  made->inputs().check_calls = setup.check_calls;
  // No host functions: the evictor is the device's, stop() comes with each request.
  return made;
}

}  // namespace

int serve_trial_worker(int fd, const TrialWorkerOpen& open) {
  const std::optional<std::string> bytes = detail::receive_request(fd);
  if (!bytes) return 0;
  const std::optional<detail::TrialSetup> setup = detail::decode_trial_setup(*bytes);
  if (!setup) {
    detail::send_answer(fd, "the setup message is damaged (a host of another version?)");
    return 65;
  }
  TrialWorkerTarget target;
  std::unique_ptr<detail::TrialInputSet> inputs;
  try {
    target = open(TrialWorkerRequest{DeviceReopen{setup->backend, setup->device, setup->arch},
                                     setup->op, setup->store});
    if (!target.device || !target.op) throw UsageError("no device or no op " + setup->op);
    if (target.op->checksum().hex() != setup->checksum) {
      throw UsageError("its op " + setup->op +
                       " is not the host's (another candidate set: another tunekit build?)");
    }
    inputs = inputs_of(*target.op, *setup);
  } catch (const std::exception& e) {
    // Never "": an empty answer means ready.
    const std::string why =
        *e.what() ? e.what() : "setting up failed (an exception without a message)";
    detail::send_answer(fd, why);
    return 65;
  } catch (...) {
    detail::send_answer(fd, "setting up failed (a non-standard exception)");
    return 65;
  }
  detail::limit_address_space(setup->memory_bytes);
  if (!detail::send_answer(fd, "")) return 71;
  detail::TrialServer server(*target.device, inputs->inputs(), /*own_builds=*/true);
  return detail::serve_requests(fd, [&](std::string_view q) { return server.serve(q); });
}

}  // namespace tunekit
