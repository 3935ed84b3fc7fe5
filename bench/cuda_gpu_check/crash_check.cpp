// (e) The crash candidate: a kernel that writes through an illegal address, tuned beside a
// correct one. The search must end with that candidate's outcome device_lost (classified; the
// progress hook sees it), a FatalError naming it, the context marked lost() and every later
// operation refused with device_lost; then the process must still tear down cleanly. It runs in
// a child forked before the parent made any CUDA call: the crash kills the context it runs in,
// and a driver context does not survive fork().
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include <fmt/format.h>

#include "cuda_gpu_check/gpu_check.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace gpu_check {
namespace {

namespace cuda = tunekit::cuda;
using tunekit::Key;

constexpr std::string_view kCrashSource = R"(
extern "C" __global__ void gpu_check_fill(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (float)i;
}
extern "C" __global__ void gpu_check_illegal(float* out, unsigned long long offset) {
  out[offset + threadIdx.x] = 1.0f;  // a terabyte past the buffer: no allocation is there
})";
constexpr std::string_view kTeardownLine = "\nteardown ok\n";

struct CrashState {
  cuda::Function fill, illegal;
  cuda::Buffer out;
  std::vector<float> host;
  int n = 4096;
};
struct CrashArgs {
  std::shared_ptr<CrashState> state;
};

void launch_fill(CrashArgs& a) {
  std::uint64_t out = a.state->out.device_pointer();
  int n = a.state->n;
  void* args[] = {&out, &n};
  a.state->fill.launch({static_cast<unsigned>((n + 255) / 256)}, {256}, 0, args);
}

void launch_illegal(CrashArgs& a) {
  std::uint64_t out = a.state->out.device_pointer();
  unsigned long long offset = 1ull << 40;
  void* args[] = {&out, &offset};
  a.state->illegal.launch({1}, {32}, 0, args);
}

// The host mirror moves only in the hooks (a candidate only enqueues): outputs() reads the
// device, the poison hook and the reference write the host's values to it.
std::unique_ptr<tunekit::Op<CrashArgs>> make_crash_op(std::shared_ptr<cuda::Context> context) {
  auto op = std::make_unique<tunekit::Op<CrashArgs>>("gpu_check_crash", 1);
  auto write_host = [](CrashArgs& a) {
    a.state->out.write(a.state->host.data(), a.state->host.size() * sizeof(float));
  };
  op->key([](const CrashArgs& a) {
      return Key{{"n", a.state->n}};
    })
      .inputs([context](const Key&) {
        auto s = std::make_shared<CrashState>();
        s->fill = context->function(kCrashSource, {}, "gpu_check_fill");
        s->illegal = context->function(kCrashSource, {}, "gpu_check_illegal");
        s->host.assign(static_cast<std::size_t>(s->n), 0.0f);
        s->out = cuda::Buffer(*context, s->host.size() * sizeof(float));
        return CrashArgs{s};
      })
      .outputs([](CrashArgs& a) {
        a.state->out.read(a.state->host.data(), a.state->host.size() * sizeof(float));
        return std::vector<tunekit::OutputView>{tunekit::OutputView::of(std::span(a.state->host))};
      })
      .reference([write_host](CrashArgs& a) {
        for (std::size_t i = 0; i < a.state->host.size(); ++i)
          a.state->host[i] = static_cast<float>(i);
        write_host(a);
      })
      .validator(write_host, nullptr)
      .candidate("fill", launch_fill)
      .candidate("illegal_address", launch_illegal)
      .default_candidate("fill")
      .in_process("its candidates use this process's CUDA context");
  return op;
}

// What a later operation on the lost context answers.
std::string later_status(const std::function<void()>& operation) {
  try {
    operation();
    return "no error";
  } catch (const tunekit::TrialError& e) {
    return std::string(tunekit::to_string(e.status()));
  } catch (const std::exception& e) {
    return std::string("other exception: ") + e.what();
  }
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The check itself, in the child. The answer is written before the context is torn down, so a
// teardown that crashes is told apart from a check that did.
void crash_in_this_process(const std::string& selector, int answer) {
  nlohmann::json j = {{"candidates", nlohmann::json::array()}};
  std::shared_ptr<cuda::Context> context = cuda::Context::open(selector);
  cuda::CudaDevice device(context);
  auto op = make_crash_op(context);
  tunekit::TunerOptions options;
  options.decide.strategy = "exhaustive";
  options.decide.confirm_pairs = 0;
  options.persist.store = "none";
  options.measure.isolation.mode = tunekit::IsolationOptions::Mode::in_process;
  options.hooks.on_progress = [&j](const tunekit::ProgressEvent& e) {
    if (!e.result) return;
    j["candidates"].push_back({{"name", std::string(e.candidate)},
                               {"status", tunekit::to_string(e.result->outcome.status)},
                               {"message", e.result->outcome.message}});
  };
  tunekit::Tuner tuner(device, options);
  try {
    tuner.tune(*op, Key{{"n", 4096}});
    j["search"] = "returned";
  } catch (const tunekit::FatalError& e) {
    j["search"] = "fatal_error";
    j["fatal"] = e.what();
  } catch (const std::exception& e) {
    j["search"] = "other_exception";
    j["fatal"] = e.what();
  }
  j["lost"] = context->lost();
  j["lost_reason"] = context->lost_reason();
  j["synchronize_after"] = later_status([&] { context->synchronize(); });
  j["allocate_after"] = later_status([&] { cuda::Buffer b(*context, 4096); });
  write_all(answer, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

[[noreturn]] void child_main(int gate, int answer, const std::string& selector) {
  char go = 0;
  ssize_t got = 0;
  do {
    got = ::read(gate, &go, 1);
  } while (got < 0 && errno == EINTR);
  if (got == 1) {
    try {
      crash_in_this_process(selector, answer);
      write_all(answer, kTeardownLine);
    } catch (const std::exception& e) {
      write_all(answer, nlohmann::json{{"error", e.what()}}.dump(
                            -1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
  }
  ::_exit(0);  // nothing of the parent's (buffers, atexit handlers) runs twice
}

// Everything the child writes until it closes its end, or until `seconds` pass (false).
bool read_answer(int fd, std::string& text, double seconds) {
  const Deadline deadline(seconds);
  char buffer[4096];
  for (;;) {
    const double left = deadline.left();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  return "ended";
}

std::string status_of(const nlohmann::json& candidates, std::string_view name) {
  for (const auto& c : candidates)
    if (c.value("name", "") == name) return c.value("status", "");
  return "not reached";
}

void judge(CheckResult& r, const nlohmann::json& j, bool torn_down) {
  const std::string fill = status_of(j["candidates"], "fill");
  const std::string crash = status_of(j["candidates"], "illegal_address");
  const bool fatal = j.value("search", "") == "fatal_error" &&
                     j.value("fatal", "").find("illegal_address") != std::string::npos;
  const bool lost = j.value("lost", false);
  const std::string sync_after = j.value("synchronize_after", "");
  const std::string alloc_after = j.value("allocate_after", "");
  r.rows = {{"the correct candidate (fill)", fill, "ok"},
            {"the crash candidate's outcome", crash, "device_lost"},
            {"the search", j.value("search", ""), "fatal_error naming illegal_address"},
            {"context lost()", lost ? "true" : "false", "true"},
            {"synchronize after", sync_after, "device_lost"},
            {"allocate after", alloc_after, "device_lost"},
            {"teardown", torn_down ? "clean" : "did not finish", "clean"}};
  const bool pass = fill == "ok" && crash == "device_lost" && fatal && lost &&
                    sync_after == "device_lost" && alloc_after == "device_lost" && torn_down;
  r.verdict = pass ? Verdict::pass : Verdict::fail;
  r.summary = fmt::format("illegal_address: {}; lost() {}", crash, lost ? "true" : "false");
  if (j.contains("lost_reason"))
    r.notes.push_back("lost reason: " + clipped(j.value("lost_reason", "")));
  if (j.contains("fatal"))
    r.notes.push_back("the search's error: " + clipped(j.value("fatal", "")));
}

}  // namespace

CrashChild CrashChild::fork_waiting(const std::string& selector) {
  int gate[2], answer[2];
  if (::pipe2(gate, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  if (::pipe2(answer, O_CLOEXEC) != 0) {
    ::close(gate[0]);
    ::close(gate[1]);
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    ::close(gate[1]);
    ::close(answer[0]);
    child_main(gate[0], answer[1], selector);
  }
  ::close(gate[0]);
  ::close(answer[1]);
  CrashChild child;
  child.pid_ = pid;
  child.gate_ = gate[1];
  child.answer_ = answer[0];
  return child;
}

CrashChild::CrashChild(CrashChild&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      gate_(std::exchange(other.gate_, -1)),
      answer_(std::exchange(other.answer_, -1)) {}

CrashChild::~CrashChild() {
  cancel();
}

void CrashChild::cancel() {
  if (gate_ >= 0) ::close(std::exchange(gate_, -1));  // EOF: the child exits
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (answer_ >= 0) ::close(std::exchange(answer_, -1));
}

CheckResult CrashChild::run(double seconds) {
  CheckResult r;
  r.columns = {"what", "seen", "expected"};
  const auto start = std::chrono::steady_clock::now();
  const char go = 1;
  std::string text;
  bool answered = false;
  if (gate_ >= 0 && ::write(gate_, &go, 1) == 1) {
    ::close(std::exchange(gate_, -1));
    answered = read_answer(answer_, text, seconds);
    if (!answered) ::kill(pid_, SIGKILL);
  }
  int status = 0;
  if (pid_ > 0) {
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  cancel();
  r.data["child"] = exit_text(status);
  r.seconds = since(start);
  const std::size_t cut = text.find('\n');
  const nlohmann::json j = nlohmann::json::parse(text.substr(0, cut), nullptr, false);
  const bool torn_down = text.find(kTeardownLine) != std::string::npos;
  if (j.is_discarded() || j.contains("error") || !j.contains("candidates")) {
    r.verdict = Verdict::fail;
    r.summary = answered ? "the child gave no result" : "the child did not answer in time";
    r.notes.push_back(fmt::format("child: {}; said: {}", exit_text(status), clipped(text)));
    return r;
  }
  r.data["child_report"] = j;
  judge(r, j, torn_down);
  if (!torn_down) r.notes.push_back("the child's teardown: " + exit_text(status));
  return r;
}

}  // namespace gpu_check
