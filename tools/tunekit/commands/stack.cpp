// tunekit stack tune <workload> --shape k=v,... [--json] [--threads N] [--budget 60s]
//                    [--budget-evals N] [--samples N] [--store SPEC]
// tunekit stack explain <workload> --shape k=v,... [--json] [--threads N] [--store SPEC]
// tunekit stack ls [--json]
// A stack workload's decisions at three levels (DESIGN §10): each op's kernel choice (the
// kernel tuner), the graph (fused or not) and the application plan (threads, blocks), each
// with its paired score against its reference and the decisions it depends on. `explain`
// measures nothing: it shows what the store knows.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/bounds.hpp"
#include "commands/commands.hpp"
#include "commands/duration.hpp"
#include "commands/environment.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/stack.hpp"
#include "tunekit/stack_catalog.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli {
namespace {

struct StackCommand {
  std::string workload;
  std::string shape;
  bool json = false;
  int threads = 0;
  std::string budget;
  long long budget_evals = 0;
  int samples = 10;
  std::string store;
  Log log;  // the tool's log (-v/-q, TUNEKIT_LOG)
};

// Decides (tune) or looks up (explain) every level of `command.workload` and reports it.
void run_stack(const StackCommand& command, bool tune) {
  const StackWorkloadEntry& entry = find_stack_workload(command.workload);
  TunerOptions options = tune ? TunerOptions::from_environment() : options_ignoring_mode();
  use_own_program_for_workers(options);
  options.hooks.log = command.log;
  options.decide.mode = tune ? Mode::tune : Mode::cached;
  if (!command.store.empty()) options.persist.store = resolve_store_spec(command.store);
  if (!command.budget.empty())
    options.decide.budget_seconds = parse_duration(command.budget, "--budget");
  if (command.budget_evals < 0)
    throw UsageError("--budget-evals must be 0 (no limit) or a positive number of points");
  options.decide.budget_evaluations = static_cast<std::size_t>(command.budget_evals);

  cpu::CpuDevice device;
  cpu::ThreadPool pool(command.threads);
  Tuner tuner(device, options);
  stack::StackOptions stack_options;
  stack_options.mode = tune ? stack::Mode::explore : stack::Mode::cache_only;
  stack_options.policy.samples = command.samples;
  stack_options.store = open_store(options.persist.store, options.hooks.log.warning_sink(),
                                   options.persist.store_options);
  stack_options.identity.device = device.identity();
  stack_options.identity.toolchain = this_toolchain();
  stack_options.identity.environment = options.persist.environment;
  stack_options.log = options.hooks.log;
  stack::StackController controller(stack_options);

  const std::string shape = command.shape.empty() ? entry.example_shape : command.shape;
  const stack::StackSummary summary = entry.decide(tuner, controller, pool, shape);
  make_reporter(command.json ? "json" : "console")->write(summary, std::cout);
}

void list_workloads(bool json) {
  if (json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const StackWorkloadEntry& e : builtin_stack_workloads())
      all.push_back(
          {{"name", e.name}, {"description", e.description}, {"example", e.example_shape}});
    std::cout << all.dump(2) << '\n';
    return;
  }
  for (const StackWorkloadEntry& e : builtin_stack_workloads())
    std::cout << fmt::format("{}  {}\n  example: --shape {}\n", e.name, e.description,
                             e.example_shape);
}

void add_common(CLI::App* sub, StackCommand& command) {
  sub->add_option("workload", command.workload, "The stack workload (see 'tunekit stack ls')")
      ->required();
  sub->add_option("--shape,-s", command.shape,
                  "The workload's shape, e.g. tokens=2048,d=512 (default: its example)");
  sub->add_flag("--json", command.json, "Write the decisions as JSON");
  sub->add_option("--threads,-t", command.threads, "Worker threads (0: one per core)")
      ->transform(integer_in(0, 4096));
  sub->add_option("--store", command.store,
                  "Where decisions are kept: sqlite:PATH, or none (default: the environment's "
                  "store)");
}

}  // namespace

void register_stack(CLI::App& app) {
  CLI::App* stack = app.add_subcommand(
      "stack",
      "Tune above single kernels: a workload's kernel choices, its graph (fused or not) and its "
      "application plan, each by paired score against its reference");
  stack->require_subcommand(1);

  auto tune = std::make_shared<StackCommand>();
  CLI::App* tune_sub =
      stack->add_subcommand("tune", "Decide every level, measuring what is not known");
  add_common(tune_sub, *tune);
  tune_sub->add_option("--budget", tune->budget,
                       "Wall-clock budget of each op's kernel search (90s, 2m; default: none)");
  tune_sub->add_option("--budget-evals", tune->budget_evals,
                       "Points each op's kernel search measures beyond the default (0: no limit)");
  tune_sub
      ->add_option("--samples", tune->samples,
                   "A B B A pairs per graph / plan candidate against its reference")
      ->transform(integer_in(2, 1000));
  tune_sub->callback([tune, tune_sub] {
    tune->log = tool_log(*tune_sub);
    run_stack(*tune, true);
  });

  auto explain = std::make_shared<StackCommand>();
  CLI::App* explain_sub =
      stack->add_subcommand("explain", "Show what is known for every level; measures nothing");
  add_common(explain_sub, *explain);
  explain_sub->callback([explain, explain_sub] {
    explain->log = tool_log(*explain_sub);
    run_stack(*explain, false);
  });

  auto json = std::make_shared<bool>(false);
  CLI::App* ls = stack->add_subcommand("ls", "The built-in stack workloads");
  ls->add_flag("--json", *json, "Write the list as JSON");
  ls->callback([json] { list_workloads(*json); });
}

}  // namespace tunekit::cli
