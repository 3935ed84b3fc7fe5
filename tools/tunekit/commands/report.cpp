// tunekit report --out FILE [--store SPEC] [--op OP] [--key KEY]... [--profile F] [--threads N]
// The stored decisions as one self-contained HTML page: a fleet view (one row per key), then
// per decision its samples, speed vs default, search curves, model score vs measured and
// failures by class (docs/report.md).
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands/bounds.hpp"
#include "commands/cache_common.hpp"
#include "commands/commands.hpp"
#include "commands/environment.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::cli {
namespace {

struct ReportCommand {
  std::string store;
  std::string op;
  std::vector<std::string> keys;
  std::string out;
  std::string profile;
  int threads = 0;
  Log log;  // the tool's log (-v/-q, TUNEKIT_LOG)
};

const CatalogEntry* builtin(const std::string& name) {
  for (const CatalogEntry& e : builtin_ops())
    if (e.name == name) return &e;
  return nullptr;
}

// The entries the --key values name (every entry when none is given), each once.
std::vector<StoredChoice> selected(const ReportCommand& command, std::vector<StoredChoice> all,
                                   const std::string& spec) {
  if (command.keys.empty()) return all;
  StoredLookup how;
  how.digests = false;
  how.op = command.op;
  how.canonical = cache_cmd::catalog_keys();
  std::vector<StoredChoice> out;
  for (const std::string& key : command.keys) {
    const std::vector<const StoredChoice*> found = find_stored(all, key, how);
    if (found.empty())
      throw UsageError(fmt::format(
          "no stored decision{} has the key '{}' in {}: 'tunekit cache ls{}' lists the stored keys",
          command.op.empty() ? "" : " of " + command.op, key, spec,
          command.op.empty() ? "" : " --op " + command.op));
    for (const StoredChoice* c : found) {
      bool seen = false;
      for (const StoredChoice& o : out) seen = seen || o.identity_digest == c->identity_digest;
      if (!seen) out.push_back(*c);
    }
  }
  return out;
}

// The cost model's ranking of this device's entries of built-in ops (the profile is this
// device's: it says nothing about another machine's entries). Nothing is measured.
void add_models(const ReportCommand& command, DecisionsReport& report, cpu::ThreadPool& pool) {
  TunerOptions options = options_ignoring_mode();
  options.persist.store = "none";
  if (!command.profile.empty()) options.model.profile = command.profile;
  cpu::CpuDevice device;
  Tuner tuner(device, options);
  std::string origin;
  if (!tuner.envelope(&origin)) {
    report.models_note =
        "this device has no profile: run 'tunekit calibrate' (or pass --profile FILE)";
    return;
  }
  const std::string product = device.identity().product;
  report.models_note = fmt::format("the model is scored for this device ({}) only", product);
  for (const StoredChoice& c : report.list.choices) {
    const CatalogEntry* entry = builtin(c.op);
    if (!entry || c.device.product != product) continue;
    try {
      const std::unique_ptr<OpBase> op = entry->make(pool);
      report.models.push_back(tuner.explain(*op, op->parse_shape(c.key)));
    } catch (const UsageError&) {
      // A key this build's op no longer reads: the section says there are no model scores.
    }
  }
}

void run_report(const ReportCommand& command) {
  if (command.out.empty()) throw UsageError("say where the page goes: --out report.html");
  cache_cmd::CacheCommand cache;
  cache.store = command.store;
  cache.log = command.log;
  const cache_cmd::OpenedStore opened = cache_cmd::open_cache_store(cache, /*create=*/false);
  Store& store = cache_cmd::require_existing(opened);
  cpu::ThreadPool pool(command.threads);
  DecisionsReport report;
  report.list.store = store.describe();
  report.list.op = command.op;
  report.list.choices = selected(command, store.list(command.op), opened.spec);
  add_models(command, report, pool);
  std::ostringstream page;
  make_reporter("html")->write_decisions(report, page);
  write_report_file(command.out, page.str());
  command.log.info(fmt::format("wrote {} ({} decisions)", command.out, report.list.choices.size()));
}

}  // namespace

void register_report(CLI::App& app) {
  auto command = std::make_shared<ReportCommand>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Write the stored decisions as one self-contained HTML page: a fleet view, then per "
      "decision its samples, speed vs default, search curves, model vs measured, failures");
  sub->add_option("--out,-o", command->out, "The HTML file to write (replaced atomically)")
      ->required();
  sub->add_option("--store", command->store,
                  "The store to read: sqlite:PATH (default: choices.db under "
                  "$TUNEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tunekit, else ~/.cache/tunekit)");
  sub->add_option("--op", command->op, "Only this op's decisions");
  sub->add_option("--key", command->keys,
                  "Only the decision for this key (e.g. m=256,n=256,k=256; repeatable)");
  sub->add_option("--profile", command->profile,
                  "Device profile for the model plot (default: this device's stored profile)");
  sub->add_option("--threads,-t", command->threads,
                  "Worker threads the ops are built with to read keys (0: one per core)")
      ->transform(integer_in(0, 4096));
  sub->callback([command, sub] {
    command->log = tool_log(*sub);
    run_report(*command);
  });
}

}  // namespace tunekit::cli
