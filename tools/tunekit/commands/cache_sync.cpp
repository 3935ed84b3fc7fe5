// tunekit cache push|pull: copy stored choices, bans and pending misses between two stores
// (docs/fleet.md "Moving choices"); the copy is the library's (sync_store).
//
//   tunekit cache push --to SPEC [--from SPEC] [what...] [--op OP] [--force] [--dry-run]
//   tunekit cache pull --from SPEC [--to SPEC] [what...] [--op OP] [--force] [--dry-run]
//
// The local side (push's --from, pull's --to, each also called --store) defaults to the store
// the other cache commands use: TUNEKIT_STORE, else the default SQLite file.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands/cache_common.hpp"
#include "commands/commands.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/store.hpp"
#include "tunekit/store_sync.hpp"

namespace tunekit::cli::cache_cmd {
namespace {

struct SyncCommand {
  std::string from;  // specs as typed; empty: the local store
  std::string to;
  std::vector<std::string> what;
  std::string op;
  bool force = false;
  bool dry_run = false;
  bool no_pending = false;
  bool json = false;
  Log log;
};

// What stops a copy before it starts, with the exit status `cache ls` gives the same state
// (docs/guide.md §4), and what to do about it.
struct SyncRefusal {
  StoreState state;
  int status;
  const char* advice;
};
constexpr SyncRefusal kSyncRefusals[] = {
    {StoreState::locked, 5,
     "another process holds it: try again when it is done (TUNEKIT_STORE_WAIT_MS=MS waits "
     "longer)"},
    {StoreState::read_only, 6, "you may not write it: ask its owner, or copy into another store"},
    {StoreState::unreadable, 6, "you lack the permission: fix its mode or owner, or its login"},
    {StoreState::not_a_store, 7, "it is left as it is: name a tunekit store"},
    {StoreState::newer_schema, 8, "copy with the tunekit that wrote it"},
    {StoreState::untrusted, 9,
     "another user could have planted its choices: fix the permissions, or set "
     "TUNEKIT_TRUST_STORE=1 to use it anyway"},
    {StoreState::not_a_file, 9, "remove what sits there, or name another file"},
    {StoreState::not_creatable, 9, "create its directory, or name another store"},
    {StoreState::unreachable, 10,
     "check that the server runs and the URL (host, port, user, database) is right"},
};

[[noreturn]] void refuse_sync(const SyncCommand& command, const char* side,
                              const std::string& shown, StoreState state, const std::string& why) {
  const SyncRefusal* refusal = nullptr;
  for (const SyncRefusal& r : kSyncRefusals)
    if (r.state == state) refusal = &r;
  command.log.error(fmt::format("cannot copy {} the store {}: it is {}; {}", side, shown, why,
                                refusal ? refusal->advice : "name another store"));
  throw CLI::RuntimeError(refusal ? refusal->status : 9);  // the status alone: the message is out
}

struct SyncSide {
  std::string spec;   // as open_store takes it
  std::string shown;  // password masked
  StoreOpening opening;
};

std::string sync_spec_of(const std::string& given, const char* option) {
  const std::string spec = resolve_store_spec(given);
  const std::string shown = shown_store_spec(spec);
  if (shown == "none" || shown == "memory") {
    throw UsageError(
        fmt::format("{} {}: push and pull copy between persistent stores; name sqlite:PATH or a "
                    "postgresql:// URL",
                    option, shown));
  }
  return spec;
}

// Opens one side quietly (its refusal is said once, by `refuse`), then lets the store warn
// through the tool's log for the rest of the run (a write it could not make, say).
SyncSide open_sync_side(const SyncCommand& command, const std::string& spec, bool target) {
  SyncSide side{spec, shown_store_spec(spec), {}};
  auto opened = std::make_shared<bool>(false);
  const WarningSink log = command.log.warning_sink();
  const WarningSink sink = [opened, log](std::string_view m) {
    if (*opened) log(m);
  };
  StoreOptions options =
      store_options_from_environment([](const char* n) -> const char* { return std::getenv(n); });
  options.create = target && !command.dry_run;  // a push may create the server's tables
  side.opening = open_store_checked(spec, options, sink);
  *opened = true;
  const StoreState state = side.opening.state;
  const char* role = target ? "into" : "from";
  if (state == StoreState::missing && !target) {
    throw UsageError(fmt::format(
        "there is no store at {}: nothing to copy from it (check the spec; 'tunekit cache ls "
        "--store SPEC' says what a store holds)",
        side.shown));
  }
  const bool usable = state == StoreState::ready || state == StoreState::read_only ||
                      (state == StoreState::missing && command.dry_run);
  if (!usable || (target && state == StoreState::read_only))
    refuse_sync(command, role, side.shown, state, side.opening.why);
  return side;
}

void run_sync(const SyncCommand& command, bool push) {
  const std::string from = sync_spec_of(command.from, "--from");
  const std::string to = sync_spec_of(command.to, "--to");
  if (same_store(from, to)) {
    throw UsageError(
        fmt::format("{} and {} name the same store: nothing to copy (give the other store with {})",
                    shown_store_spec(from), shown_store_spec(to), push ? "--to" : "--from"));
  }
  SyncSide source = open_sync_side(command, from, /*target=*/false);
  SyncSide target = open_sync_side(command, to, /*target=*/true);
  StoreSyncOptions options;
  options.op = command.op;
  options.what = command.what;
  options.canonical = catalog_keys();
  options.force = command.force;
  options.dry_run = command.dry_run;
  options.pending = !command.no_pending;
  if (source.opening.state == StoreState::read_only) options.source_read_only = source.opening.why;
  // A dry run into a store not created yet says what a copy that creates it would do.
  StoreSyncSummary summary = target.opening.store
                                 ? sync_store(*source.opening.store, *target.opening.store, options)
                                 : plan_sync_into_new(*source.opening.store, options);
  summary.from = source.shown;  // as typed (resolved), never with a password
  summary.to = target.shown;
  make_reporter(command.json ? "json" : "console")->write(summary, std::cout);
  std::cout.flush();
  if (!summary.complete()) throw CLI::RuntimeError(1);  // the summary says what did not arrive
}

void add_sync_flags(CLI::App& sub, SyncCommand& command) {
  sub.add_option("what", command.what,
                 "Only these: identity digests (or prefixes of at least 6 hex digits), key "
                 "digests or keys, as 'cache show' takes them (default: everything)");
  sub.add_option("--op", command.op, "Only this op's entries, bans and pending misses");
  sub.add_flag("--force", command.force,
               "Replace the target's entry even where it is newer (or marked stale)");
  sub.add_flag("--dry-run", command.dry_run, "Say what would be copied; write nothing");
  sub.add_flag("--no-pending", command.no_pending,
               "Leave the pending misses where they are (by default they move: the target adds "
               "their counts and the source forgets them)");
  sub.add_flag("--json", command.json, "Write the summary as JSON");
  sub.footer(
      "Exit status: 0 copied (entries kept because the target's are newer included); 1 "
      "something written did not arrive (see the warnings); 2 a usage error, or the same store "
      "on both sides; 5 locked; 6 unreadable, or a read-only target; 7 not a tunekit store; 8 "
      "written by a newer tunekit; 9 refused (untrusted, not a regular file); 10 a store server "
      "that cannot be reached.");
}

}  // namespace

void register_push_pull(CLI::App& cache) {
  const std::string local =
      "The local store (default: $TUNEKIT_STORE, else choices.db under $TUNEKIT_CACHE_DIR, "
      "else $XDG_CACHE_HOME/tunekit, else ~/.cache/tunekit)";
  auto command = std::make_shared<SyncCommand>();
  CLI::App* push = cache.add_subcommand(
      "push", "Copy stored choices, bans and pending misses into another store (a server)");
  push->add_option("--to", command->to, "The store to copy into: postgresql://... or sqlite:PATH")
      ->required();
  push->add_option("--from,--store", command->from, local);
  add_sync_flags(*push, *command);
  push->callback([command, push] {
    command->log = tool_log(*push);
    run_sync(*command, /*push=*/true);
  });

  CLI::App* pull = cache.add_subcommand(
      "pull", "Copy stored choices, bans and pending misses from another store (a server)");
  pull->add_option("--from", command->from,
                   "The store to copy from: postgresql://... or sqlite:PATH")
      ->required();
  pull->add_option("--to,--store", command->to, local);
  add_sync_flags(*pull, *command);
  pull->callback([command, pull] {
    command->log = tool_log(*pull);
    run_sync(*command, /*push=*/false);
  });
}

}  // namespace tunekit::cli::cache_cmd
