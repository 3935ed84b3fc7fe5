// tunekit worker [--store postgresql://...] [--backend cpu|opencl|cuda] [--device D]
//                [--arch sm_XX] [--threads N] [--dataset FILE [--pace X]] [--idle-exit 60s]
//                [--max-items N] [--item-ttl 30s] [--poll 0.5s] [--numerics C] [--json]
// Evaluates the points of the shared searches of a server store (docs/fleet.md "Shared
// searches") whose hardware identity is this machine's, until idle, the item limit, or a
// SIGINT/SIGTERM (the item in hand is finished first).
#include <csignal>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/backend.hpp"
#include "commands/bounds.hpp"
#include "commands/commands.hpp"
#include "commands/duration.hpp"
#include "commands/environment.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/replay.hpp"
#include "tunekit/search_worker.hpp"
#include "tunekit/store.hpp"

namespace tunekit::cli {
namespace {

volatile std::sig_atomic_t stop_requested = 0;
extern "C" void request_stop(int) {
  stop_requested = 1;
}

struct WorkerCommand {
  std::string store;
  std::string backend;
  std::string device;
  std::string arch;
  int threads = 0;
  std::string dataset;
  double pace = 0;
  std::string idle_exit;
  long long max_items = 0;
  std::string item_ttl;
  std::string poll;
  std::string numerics;
  bool json = false;
  Log log;
};

// The ops a search may name, made for this worker's device once each.
class OpsOfBackend {
 public:
  OpsOfBackend(const WorkerCommand& c, const std::string& store, cpu::ThreadPool& pool)
      : ops_(c.backend, {c.device, c.arch, store, c.log}, pool) {}
  std::optional<WorkerTarget> resolve(const SharedSearch& s) {
    const OpBase* op = ops_.find(s.op);
    if (!op) return std::nullopt;
    return WorkerTarget{&ops_.device(), op, op->parse_shape(s.key)};
  }

 private:
  BackendOps ops_;
};

// A recorded space replayed (every reading the recorded time, as `replay` ranks).
class OpsOfRecording {
 public:
  OpsOfRecording(const std::string& dataset, double pace)
      : recording_(Recording::load(dataset)),
        device_(recording_, {ReplayDeviceOptions::Reading::recorded_time, 1, pace}),
        op_(make_replay_op(recording_)) {}
  std::optional<WorkerTarget> resolve(const SharedSearch& s) {
    if (s.op != op_->name()) return std::nullopt;
    return WorkerTarget{&device_, op_.get(), op_->parse_shape(s.key)};
  }

 private:
  Recording recording_;
  ReplayDevice device_;
  std::unique_ptr<OpBase> op_;
};

// The worker's options from the flags (a worker has no mode: TUNEKIT_MODE is not read).
WorkerOptions worker_options(const WorkerCommand& c, const std::string& spec) {
  WorkerOptions options;
  options.tuner = options_ignoring_mode();
  options.tuner.hooks.log = c.log;
  options.tuner.persist.store = spec;
  if (!c.item_ttl.empty())
    options.tuner.decide.share.item_ttl_seconds = parse_duration(c.item_ttl, "--item-ttl");
  if (!c.idle_exit.empty()) options.idle_exit_seconds = parse_duration(c.idle_exit, "--idle-exit");
  options.max_items = static_cast<std::size_t>(c.max_items);
  if (!c.poll.empty()) options.poll_seconds = parse_duration(c.poll, "--poll");
  if (!c.numerics.empty()) {
    const auto policy = numerics_from_string(c.numerics);
    if (!policy)
      throw UsageError(fmt::format(
          "unknown --numerics '{}': use bitwise, reassociates or approximate", c.numerics));
    options.tuner.decide.numerics_policy = *policy;  // part of the identity searches carry
  }
  options.stop = [] { return stop_requested != 0; };
  if (!c.dataset.empty() && (!c.backend.empty() || !c.device.empty() || !c.arch.empty()))
    throw UsageError("--dataset replays a recorded device: drop --backend, --device and --arch");
  if (c.dataset.empty() && c.pace > 0)
    throw UsageError("--pace slows a replayed recording: it needs --dataset FILE");
  return options;
}

void print_summary(const WorkerCommand& c, const WorkQueue& queue, const WorkerSummary& summary) {
  if (c.json) {
    nlohmann::ordered_json j;
    j["store"] = queue.describe();
    j["items"] = summary.items;
    j["items_lost"] = summary.items_lost;
    j["searches_joined"] = summary.searches_joined;
    j["searches_refused"] = summary.searches_refused;
    j["stop_reason"] = summary.stop_reason;
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << fmt::format(
      "{} items evaluated and recorded ({} more not recorded: the lease had passed to another "
      "worker or the search had ended); {} searches joined, {} left to others (another identity "
      "or an op this worker lacks: -v says which); stopped: {}\n",
      summary.items, summary.items_lost, summary.searches_joined, summary.searches_refused,
      summary.stop_reason);
}

void run_worker(const WorkerCommand& c) {
  const std::string spec = resolve_store_spec(c.store);
  const WorkerOptions options = worker_options(c, spec);
  StoreOptions store_options = options.tuner.persist.store_options;
  const std::unique_ptr<Store> store = open_store(
      spec, [&](std::string_view m) { c.log.warn(m); }, store_options);
  if (!store)
    throw UsageError(fmt::format("--store {}: no store to take work from (see the warning above)",
                                 shown_store_spec(spec)));
  std::string why;
  const std::unique_ptr<WorkQueue> queue = store->open_work_queue(why);
  if (!queue) throw UsageError("--store: " + why);

  cpu::ThreadPool pool(c.threads);
  std::unique_ptr<OpsOfBackend> backend;
  std::unique_ptr<OpsOfRecording> recording;
  WorkerResolver resolve;
  if (c.dataset.empty()) {
    backend = std::make_unique<OpsOfBackend>(c, spec, pool);
    resolve = [&](const SharedSearch& s) { return backend->resolve(s); };
  } else {
    recording = std::make_unique<OpsOfRecording>(c.dataset, c.pace);
    resolve = [&](const SharedSearch& s) { return recording->resolve(s); };
  }
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  SearchWorker worker(*queue, resolve, options);
  c.log.info(fmt::format("worker taking work from {}", queue->describe()));
  print_summary(c, *queue, worker.run());
}

}  // namespace

void register_worker(CLI::App& app) {
  auto command = std::make_shared<WorkerCommand>();
  CLI::App* worker = app.add_subcommand(
      "worker",
      "Evaluate points of the shared searches ('tune --share') of a server store whose hardware "
      "identity is this machine's");
  worker->add_option("--store", command->store,
                     "The server store: postgresql://... (default: $TUNEKIT_STORE)");
  worker->add_option("--backend", command->backend, "cpu (default) | opencl | cuda");
  worker->add_option("--device", command->device,
                     "OpenCL or CUDA device: an index or a part of its name");
  worker->add_option("--arch", command->arch, "CUDA: the architecture NVRTC compiles for");
  worker->add_option("--threads,-t", command->threads, "Worker threads (0: one per core)")
      ->transform(integer_in(0, 4096));
  worker->add_option("--dataset", command->dataset,
                     "Replay this recorded space (a Kernel Tuner cache or T4 file) instead of a "
                     "device: for 'replay --share' searches");
  worker
      ->add_option("--pace", command->pace,
                   "With --dataset: real seconds slept per recorded second of each build and "
                   "validation (default 0)")
      ->check(real_in(0, 1000));
  worker->add_option("--idle-exit", command->idle_exit,
                     "Stop after this long without work (60s, 5m; default: never)");
  worker->add_option("--max-items", command->max_items, "Stop after N items (default: no limit)")
      ->transform(integer_in(1, std::int64_t{1} << 40));
  worker->add_option("--item-ttl", command->item_ttl,
                     "Lease of an item, renewed while it runs; a worker gone this long loses it "
                     "(default 30s)");
  worker->add_option("--poll", command->poll,
                     "How often the store is asked for searches and items while idle (default "
                     "0.5s)");
  worker->add_option("--numerics", command->numerics,
                     "The numerics policy of the searches to join, as 'tune --numerics' gave "
                     "it (it is part of their identity; default reassociates)");
  worker->add_flag("--json", command->json, "Write the summary as JSON");
  worker->callback([command, worker] {
    command->log = tool_log(*worker);
    run_worker(*command);
  });
}

}  // namespace tunekit::cli
