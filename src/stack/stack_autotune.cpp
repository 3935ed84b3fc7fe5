// The process-wide opt-in controller: the one global of the stack layer, installed only by
// an explicit call, never from the environment, never with I/O.
#include <atomic>
#include <mutex>

#include "tunekit/stack.hpp"

namespace tunekit::stack {
namespace {

struct Installed {
  std::mutex mutex;  // serialises install and reset
  std::unique_ptr<StackController> owner;
  std::atomic<StackController*> current{nullptr};
};

Installed& installed() {
  static Installed state;  // constructed on first use: nothing happens before a call
  return state;
}

}  // namespace

StackController& enable_stack_autotune(StackOptions options) {
  Installed& s = installed();
  std::lock_guard lock(s.mutex);
  if (s.owner)
    throw UsageError(
        "enable_stack_autotune was already called: the first options stand; use "
        "stack_autotuner() to reach the installed controller");
  s.owner = std::make_unique<StackController>(std::move(options));
  s.current.store(s.owner.get(), std::memory_order_release);
  return *s.owner;
}

StackController* stack_autotuner() {
  return installed().current.load(std::memory_order_acquire);
}

void reset_stack_autotune_for_testing() {
  Installed& s = installed();
  std::lock_guard lock(s.mutex);
  s.current.store(nullptr, std::memory_order_release);
  s.owner.reset();
}

}  // namespace tunekit::stack
