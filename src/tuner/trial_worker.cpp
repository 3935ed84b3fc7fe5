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

// The inputs of a spawned worker: made as the host made its own (SearchContext::prepare_inputs)
// from the same op, key and counts, so both validate and time on the same values.
class SpawnedInputs {
 public:
  SpawnedInputs(const OpBase& op, const detail::TrialSetup& setup) {
    const Key key = Key::parse(setup.key);
    if (setup.input_sets < 1 || setup.input_sets > static_cast<std::uint32_t>(op.input_sets()) ||
        setup.rotation_copies > kMaxRotation)
      throw UsageError("the setup asks for input sets or copies the op does not have");
    workload_ = op.make_workload(key);
    reference_ = Reference::capture(*workload_, op.has_reference(), setup.default_index);
    for (std::uint32_t set = 1; set < setup.input_sets; ++set) {
      more_sets_.push_back(op.make_workload(key, static_cast<int>(set)));
      more_references_.push_back(
          Reference::capture(*more_sets_.back(), op.has_reference(), setup.default_index));
    }
    for (std::uint32_t c = 0; c < setup.rotation_copies; ++c)
      rotation_.push_back(op.make_workload(key));
    inputs_.workload = workload_.get();
    inputs_.reference = &*reference_;
    for (std::size_t s = 0; s < more_sets_.size(); ++s)
      inputs_.more_sets.emplace_back(more_sets_[s].get(), &more_references_[s]);
    for (auto& w : rotation_) inputs_.rotation.push_back(w.get());
    inputs_.tolerance = op.tolerance(key);
    inputs_.check_calls = setup.check_calls;
    // No host functions: the evictor is the device's, stop() is the host's answer in the request.
  }
  const detail::TrialInputs& inputs() const { return inputs_; }

 private:
  std::unique_ptr<Workload> workload_;
  std::optional<Reference> reference_;
  std::vector<std::unique_ptr<Workload>> more_sets_;
  std::vector<Reference> more_references_;
  std::vector<std::unique_ptr<Workload>> rotation_;
  detail::TrialInputs inputs_;
};

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
  std::unique_ptr<SpawnedInputs> inputs;
  try {
    target = open(TrialWorkerRequest{DeviceReopen{setup->backend, setup->device, setup->arch},
                                     setup->op, setup->store});
    if (!target.device || !target.op) throw UsageError("no device or no op " + setup->op);
    if (target.op->checksum().hex() != setup->checksum) {
      throw UsageError("its op " + setup->op +
                       " is not the host's (another candidate set: another tunekit build?)");
    }
    inputs = std::make_unique<SpawnedInputs>(*target.op, *setup);
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
