// tunekit import-kt FILE [--store SPEC] [--json]: stores a Kernel Tuner cache file's (or a T4
// results file's) results as evidence: op kt:<kernel_name>, key from the problem size, device
// backend "kt" named as in the file; winner = the best valid configuration. `tunekit cache
// ls/show` then lists it. The file is read completely before the store is opened, so a bad
// file leaves the store untouched.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands/commands.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/interop.hpp"
#include "tunekit/terminal_text.hpp"

namespace tunekit::cli {
namespace {

using Json = nlohmann::ordered_json;

struct ImportKtCommand {
  std::string file;
  std::string store;  // empty: the environment's SQLite file; "none": summary only
  bool json = false;
  Log log;  // the tool's log (-v/-q, TUNEKIT_LOG)
};

// Failures by kind: "6 compile_failed, 155 launch_failed".
std::string failures_text(const Recording& r, Json& counts) {
  counts = Json::object();
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r.result(i).status != Status::ok) {
      auto& n = counts[std::string(to_string(r.result(i).status))];
      n = n.is_null() ? 1 : n.get<std::size_t>() + 1;
    }
  std::string text;
  for (const auto& [status, n] : counts.items())
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", n.get<std::size_t>(), status);
  return text.empty() ? "none" : text;
}

// Where the imported choice went.
struct Stored {
  std::string in;  // the store's description; empty: not stored (--store none)
  bool replaced = false;
};

Stored store_choice(const ImportKtCommand& command, const StoredChoice& c) {
  const std::string spec = resolve_store_spec(command.store);
  if (spec == "none" || spec == "memory") return {};
  const std::unique_ptr<Store> store = open_store(
      spec, command.log.warning_sink(),
      store_options_from_environment([](const char* name) { return std::getenv(name); }));
  if (!store)
    throw UsageError(fmt::format(
        "nothing imported: the store {} cannot be used (see the warning above); pass --store "
        "sqlite:PATH for another file, or --store none for the summary only",
        shown_store_spec(spec)));
  Stored out;
  out.replaced = store->find(c.identity_digest).has_value();
  store->put(c);
  out.in = store->describe();
  return out;
}

void print_json(const ImportKtCommand& command, const Recording& recording,
                const ImportedRecording& imported, const Stored& stored) {
  const StoredChoice& c = imported.choice;
  Json counts;
  failures_text(recording, counts);
  Json j;
  j["file"] = command.file;
  j["format"] = recording.format() == Recording::Format::t4 ? "t4" : "kernel_tuner_cache";
  j["kernel"] = recording.kernel_name();
  j["device"] = recording.device_name();
  j["op"] = c.op;
  j["key"] = c.key;
  j["configurations"] = imported.configurations;
  j["valid"] = imported.valid;
  j["failed"] = imported.configurations - imported.valid;
  j["failures"] = counts;
  j["best_config"] = c.winner;
  j["best_ms"] = imported.best_ms;
  j["identity"] = c.identity_digest;
  j["store"] = stored.in.empty() ? Json(nullptr) : Json(stored.in);
  j["replaced"] = stored.replaced;
  // A file's names may hold bytes that are not UTF-8: replaced, not a crash of the dump.
  std::cout << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

// The names and configs come from the file: escaped, so a planted file cannot drive the
// terminal.
void print_text(const ImportKtCommand& command, const Recording& recording,
                const ImportedRecording& imported, const Stored& stored) {
  const StoredChoice& c = imported.choice;
  Json counts;
  const std::string failures = failures_text(recording, counts);
  std::cout << fmt::format(
      "{}: kernel {} on {}\n", command.file,
      recording.kernel_name().empty() ? "(unnamed)" : terminal_safe(recording.kernel_name()),
      recording.device_name().empty() ? "(unnamed device)"
                                      : terminal_safe(recording.device_name()));
  std::cout << fmt::format("  configurations  {} ({} valid, {} failed: {})\n",
                           imported.configurations, imported.valid,
                           imported.configurations - imported.valid, failures);
  std::cout << fmt::format("  best            {:.6g} ms at {}\n", imported.best_ms,
                           terminal_safe(c.winner));
  if (stored.in.empty()) {
    std::cout << "  not stored (--store none)\n";
  } else {
    std::cout << fmt::format("  stored as       {} {}  (identity {}){}\n  in              {}\n",
                             terminal_safe(c.op), terminal_safe(c.key),
                             c.identity_digest.substr(0, 12),
                             stored.replaced ? ", replacing the stored choice" : "", stored.in);
  }
}

void run_import_kt(const ImportKtCommand& command) {
  const Recording recording = Recording::load(command.file);
  const ImportedRecording imported = import_recording(recording);
  const Stored stored = store_choice(command, imported.choice);
  if (command.json)
    print_json(command, recording, imported, stored);
  else
    print_text(command, recording, imported, stored);
}

}  // namespace

void register_import_kt(CLI::App& app) {
  auto command = std::make_shared<ImportKtCommand>();
  CLI::App* cmd = app.add_subcommand(
      "import-kt",
      "Store a Kernel Tuner cache file's (or T4 results file's) results as evidence; "
      "'tunekit cache ls/show' then lists it");
  cmd->add_option("file", command->file, "Kernel Tuner cache (.json, .json.gz) or T4 file")
      ->required();
  cmd->add_option("--store", command->store,
                  "Where to store it: sqlite:PATH, or none to print the summary only (default: "
                  "choices.db under $TUNEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tunekit, else "
                  "~/.cache/tunekit)");
  cmd->add_flag("--json", command->json, "Write the summary as JSON");
  cmd->callback([command, cmd] {
    command->log = tool_log(*cmd);
    run_import_kt(*command);
  });
}

}  // namespace tunekit::cli
