// tunekit explain <op> --shape k=v,... [--profile F] [--json] [--numerics C] [--threads N]
//                 [--store SPEC]
// Every candidate with its cost-model score, its admission under the numerics policy and its
// stored measurement, and the model's pick (DESIGN §7). Nothing is measured.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands/bounds.hpp"
#include "commands/commands.hpp"
#include "commands/environment.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli {
namespace {

struct ExplainCommand {
  std::string op;
  std::string shape;
  std::string profile;
  bool json = false;
  std::string numerics;
  int threads = 0;
  std::string store;
};

void run_explain(const ExplainCommand& command) {
  const CatalogEntry& entry = find_builtin_op(command.op);
  TunerOptions options = options_ignoring_mode();
  if (!command.profile.empty()) options.model.profile = command.profile;
  if (!command.numerics.empty()) {
    auto policy = numerics_from_string(command.numerics);
    if (!policy)
      throw UsageError(fmt::format(
          "unknown --numerics '{}': use bitwise, reassociates or approximate", command.numerics));
    options.decide.numerics_policy = *policy;
  }
  if (!command.store.empty()) options.persist.store = resolve_store_spec(command.store);
  cpu::ThreadPool pool(command.threads);
  const std::unique_ptr<OpBase> op = entry.make(pool);
  const std::string shape = command.shape.empty() ? entry.example_shape : command.shape;
  Key key;
  try {
    key = op->parse_shape(shape);
  } catch (const UsageError& e) {
    throw UsageError(
        fmt::format("bad --shape '{}' for {}: {}\n  example: tunekit explain {} "
                    "--shape {}",
                    shape, entry.name, e.what(), entry.name, entry.example_shape));
  }
  cpu::CpuDevice device;
  Tuner tuner(device, options);
  const ModelReport report = tuner.explain(*op, key);
  make_reporter(command.json ? "json" : "console")->write(report, std::cout);
}

}  // namespace

void register_explain(CLI::App& app) {
  auto command = std::make_shared<ExplainCommand>();
  CLI::App* sub = app.add_subcommand(
      "explain",
      "Rank every candidate of an op with the cost model (no measurement): score, admission "
      "under the numerics policy, stored measurement, and the model's pick");
  sub->add_option("op", command->op, "The op (see 'tunekit ops')")->required();
  sub->add_option("--shape,-s", command->shape,
                  "The key, e.g. m=256,n=256,k=256 (default: the op's example shape)");
  sub->add_option("--profile", command->profile,
                  "A device profile file (from 'tunekit calibrate --out'); default: this "
                  "device's stored profile");
  sub->add_flag("--json", command->json, "Write the explanation as JSON");
  sub->add_option("--numerics", command->numerics,
                  "Most permissive numerics class admitted: bitwise | reassociates | approximate");
  sub->add_option("--threads,-t", command->threads,
                  "Worker threads the op's candidates are built for (0: one per core)")
      ->transform(integer_in(0, 4096));
  sub->add_option("--store", command->store,
                  "Where stored measurements are read: sqlite:PATH, or none (default: the "
                  "environment's store)");
  sub->callback([command] { run_explain(*command); });
}

}  // namespace tunekit::cli
