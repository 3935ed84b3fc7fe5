// tunekit cache ls|show|rm|export|import: look at, prune, and move the stored choices.
//
//   tunekit cache ls [--op OP] [--json] [--pending]
//   tunekit cache show <digest|key>... [--shape KEY [--op OP]]... [--json]
//   tunekit cache rm <digest|key|op>... [--shape KEY [--op OP]]... | --all
//                                                   (pending misses they name go too)
//   tunekit cache export --dir D [--op OP]
//   tunekit cache import D [--threads N]
//   tunekit cache push --to SPEC | pull --from SPEC   (cache_sync.cpp)
//
// Every command takes --store SPEC (default: the environment's SQLite file, as `tune` uses).
// export and import are in cache_transfer.cpp, what they share with these in cache_common.hpp.
#include <algorithm>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands/cache_common.hpp"
#include "commands/commands.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/catalog.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/reporter.hpp"
#include "tunekit/store.hpp"

namespace tunekit::cli {
namespace cache_cmd {
namespace {

// Stored choices are rendered by the library's reporters (tunekit/reporter.hpp).
std::unique_ptr<Reporter> reporter_for(const CacheCommand& command) {
  return make_reporter(command.json ? "json" : "console");
}

// ---------------------------------------------------------------------------------------------
// Finding entries by what the user typed

// The entries one argument names (an ambiguous digest prefix is a UsageError listing them);
// a --shape value names by key only, in --op's entries when given.
std::vector<const StoredChoice*> resolve(const CacheCommand& command,
                                         const std::vector<StoredChoice>& entries,
                                         const std::string& what, bool ops, bool shape,
                                         const KeyCanonicaliser& keys) {
  StoredLookup how;
  how.digests = !shape;
  how.ops = ops && !shape;
  how.op = shape ? command.op : std::string();
  how.canonical = keys;
  return find_stored(entries, what, how);
}

// The arguments, then the --shape values (true: match as a key only).
std::vector<std::pair<std::string, bool>> wanted(const CacheCommand& command) {
  std::vector<std::pair<std::string, bool>> out;
  for (const std::string& w : command.what) out.emplace_back(w, false);
  for (const std::string& s : command.shapes) out.emplace_back(s, true);
  return out;
}

std::string no_shape_match(const CacheCommand& command, const std::string& shape,
                           const std::string& spec) {
  const std::string of = command.op.empty() ? "" : " of " + command.op;
  return fmt::format(
      "no stored choice{} has the key '{}' in {}: 'tunekit cache ls{}' lists the stored keys", of,
      shape, spec, command.op.empty() ? "" : " --op " + command.op);
}

std::string no_match_help(bool ops) {
  return fmt::format(
      "give an identity digest (or a prefix of at least {} hex digits), a key digest, {}a key "
      "such as n=1000,dtype=f32; 'tunekit cache ls' lists what is stored",
      kMinDigestPrefix, ops ? "an op name, or " : "or ");
}

// ---------------------------------------------------------------------------------------------
// ls

// What stands between `cache ls` and a listing, with its exit status (docs/guide.md): 0 is a
// listing, an empty store or one not created yet.
struct LsRefusal {
  StoreState state;
  int status;
  const char* advice;
};
constexpr LsRefusal kLsRefusals[] = {
    {StoreState::locked, 5,
     "another process holds it: try again when it is done (TUNEKIT_STORE_WAIT_MS=MS waits "
     "longer)"},
    {StoreState::unreadable, 6,
     "you lack the permission: fix its mode or owner, or pass --store sqlite:PATH"},
    {StoreState::not_a_store, 7,
     "it is left as it is: move it aside (the next tune creates a new store) or pass --store "
     "sqlite:PATH"},
    {StoreState::newer_schema, 8,
     "list it with the tunekit that wrote it, or pass --store sqlite:PATH for a store of this "
     "version"},
    {StoreState::untrusted, 9,
     "another user could have planted its choices: fix the permissions, or set "
     "TUNEKIT_TRUST_STORE=1 to use it anyway"},
    {StoreState::not_a_file, 9, "remove what sits there, or pass --store sqlite:PATH"},
    {StoreState::unreachable, 10,
     "check that the server runs and the URL (host, port, user, database) is right, or pass "
     "--store sqlite:PATH for a local store"},
};
// A state without a row of its own (none is expected): said as it is, with the usual way out.
constexpr LsRefusal kOtherRefusal{StoreState::not_creatable, 9,
                                  "pass --store sqlite:PATH to use another store"};

[[noreturn]] void refuse_ls(const CacheCommand& command, const OpenedStore& opened) {
  const LsRefusal* refusal = &kOtherRefusal;
  for (const LsRefusal& r : kLsRefusals)
    if (r.state == opened.state) refusal = &r;
  command.log.error(fmt::format("cannot list the store {}: it is {}; {}", opened.path, opened.why,
                                refusal->advice));
  throw CLI::RuntimeError(refusal->status);  // the status alone: the message is out
}

void run_ls(const CacheCommand& command) {
  const OpenedStore opened = look_at_store(command);
  if (opened.state == StoreState::missing) {
    if (command.json) {
      std::cout << "[]\n";
    } else {
      std::cout << fmt::format(
          "no {}: the store {} does not exist yet (tunekit "
          "tune creates it)\n",
          command.pending ? "pending misses" : "choices stored", opened.path);
    }
    return;
  }
  if (!opened.store) refuse_ls(command, opened);
  if (command.pending) {
    reporter_for(command)->write(
        PendingMissList{opened.spec, command.op, opened.store->pending(command.op)}, std::cout);
    return;
  }
  StoredChoiceList list{opened.spec, command.op,
                        opened.state == StoreState::read_only ? opened.why : std::string(),
                        opened.store->list(command.op)};
  reporter_for(command)->write(list, std::cout);
}
// ---------------------------------------------------------------------------------------------
// show

void run_show(const CacheCommand& command) {
  if (command.what.empty() && command.shapes.empty()) {
    throw UsageError(
        "say which stored choice to show: an identity digest (or a prefix), a key digest, a key, "
        "or --shape m=128,n=64 (--op OP); 'tunekit cache ls' lists what is stored");
  }
  const OpenedStore opened = open_cache_store(command, /*create=*/false);
  Store& store = require_existing(opened);
  const std::vector<StoredChoice> entries = store.list();
  const KeyCanonicaliser keys = catalog_keys();
  std::vector<const StoredChoice*> shown;
  std::set<std::string> seen;
  for (const auto& [what, shape] : wanted(command)) {
    const auto found = resolve(command, entries, what, /*ops=*/false, shape, keys);
    if (found.empty() && shape) throw UsageError(no_shape_match(command, what, opened.spec));
    if (found.empty()) {
      throw UsageError(fmt::format("no stored choice matches '{}' in {}: {}", what, opened.spec,
                                   no_match_help(false)));
    }
    for (const StoredChoice* c : found)
      if (seen.insert(c->identity_digest).second) shown.push_back(c);
  }
  std::vector<StoredChoiceDetail> details;
  for (const StoredChoice* c : shown) details.push_back({*c, store.bans(c->identity_digest)});
  reporter_for(command)->write(details, std::cout);
}

// ---------------------------------------------------------------------------------------------
// rm

// The identity digests (full, each once) of the entries and of the pending misses the
// arguments name, and the arguments that name neither.
struct Removal {
  std::vector<std::string> choices;
  std::vector<std::string> pending;
  std::vector<std::string> unmatched;
};

// Whether one argument names a pending miss: its op, its key (as `resolve` matches keys), or
// its identity digest (or a prefix of at least kMinDigestPrefix hex digits).
bool names_pending(const PendingMiss& m, const std::string& what, bool shape,
                   const CacheCommand& command, const KeyCanonicaliser& keys) {
  if (shape)
    return (command.op.empty() || m.op == command.op) && names_key(m.op, m.key, what, keys);
  if (m.op == what || names_identity(m.identity_digest, what)) return true;
  return names_key(m.op, m.key, what, keys);
}

Removal what_to_remove(const CacheCommand& command, const std::vector<StoredChoice>& entries,
                       const std::vector<PendingMiss>& pending) {
  Removal r;
  std::set<std::string> seen;
  auto add = [&](std::vector<std::string>& to, const std::string& digest) {
    if (seen.insert(digest).second) to.push_back(digest);
  };
  const KeyCanonicaliser keys = catalog_keys();
  for (const auto& [what, shape] : wanted(command)) {
    const auto found = resolve(command, entries, what, /*ops=*/true, shape, keys);
    for (const StoredChoice* c : found) add(r.choices, c->identity_digest);
    bool any = !found.empty();
    for (const PendingMiss& m : pending) {
      if (!names_pending(m, what, shape, command, keys)) continue;
      add(r.pending, m.identity_digest);
      any = true;
    }
    if (!any) r.unmatched.push_back(what);
  }
  return r;
}

// cache rm: the entries named (with their bans and pending misses), and pending misses named
// by their op, key or digest even where nothing is stored for them; --all: everything.
void run_rm(const CacheCommand& command) {
  if (command.all == !(command.what.empty() && command.shapes.empty())) {
    throw UsageError(command.all ? "give either what to remove or --all, not both"
                                 : "say what to remove (an identity digest or prefix, a key "
                                   "digest, a key or an op name), or --all");
  }
  const OpenedStore opened = open_cache_store(command, /*create=*/false, /*write=*/true);
  Store& store = require_existing(opened);
  const std::vector<StoredChoice> entries = store.list();
  const std::vector<PendingMiss> pending = store.pending();
  Removal r;
  if (command.all) {
    for (const StoredChoice& c : entries) r.choices.push_back(c.identity_digest);
    for (const PendingMiss& m : pending) r.pending.push_back(m.identity_digest);
    if (r.choices.empty() && r.pending.empty()) {
      std::cout << fmt::format("nothing to remove: the store {} is empty\n", opened.spec);
      return;
    }
  } else {
    r = what_to_remove(command, entries, pending);
    if (r.choices.empty() && r.pending.empty()) {
      std::string typed;
      for (const std::string& what : r.unmatched)
        typed += fmt::format("{}'{}'", typed.empty() ? "" : ", ", what);
      throw UsageError(
          fmt::format("nothing in {} matches {}: {}", opened.spec, typed, no_match_help(true)));
    }
    for (const std::string& what : r.unmatched)
      command.log.warn(fmt::format("'{}' matches no stored choice", what));
  }
  std::size_t removed = 0, misses = 0;
  for (const std::string& digest : r.choices) removed += store.remove(digest);
  for (const std::string& digest : r.pending) misses += store.remove_pending(digest);
  std::cout << fmt::format(
      "removed {} stored choice{}{} from {}\n", removed, removed == 1 ? "" : "s",
      misses ? fmt::format(" and {} pending miss{}", misses, misses == 1 ? "" : "es") : "",
      opened.spec);
  if (removed + misses == 0) throw UsageError("nothing was removed (see the warning above)");
}

}  // namespace
}  // namespace cache_cmd

namespace {

using cache_cmd::CacheCommand;
using Command = std::shared_ptr<CacheCommand>;

constexpr const char* kStoreHelp =
    "The store: sqlite:PATH (default: choices.db under $TUNEKIT_CACHE_DIR, else "
    "$XDG_CACHE_HOME/tunekit, else ~/.cache/tunekit)";

// A subcommand's callback: the tool's log (-v/-q) set, then the command run.
std::function<void()> logged(const Command& command, CLI::App* sub,
                             void (*run)(const CacheCommand&)) {
  return [command, sub, run] {
    command->log = tool_log(*sub);
    run(*command);
  };
}

void add_ls(CLI::App& cache, const Command& command) {
  CLI::App* ls = cache.add_subcommand("ls", "List the stored choices, one line each");
  ls->add_option("--op", command->op, "Only this op's choices");
  ls->add_flag("--json", command->json, "Every field of every entry as JSON");
  ls->add_option("--store", command->store, kStoreHelp);
  ls->add_flag("--pending", command->pending,
               "List the misses recorded in mode cached (op, key, count, last seen) instead: "
               "'tunekit tune --pending' tunes them");
  ls->footer(
      "Exit status: 0 listed, empty or not created yet; 5 locked by another process; 6 "
      "unreadable (permissions); 7 not a tunekit store or corrupt; 8 written by a newer "
      "tunekit; 9 refused (writable by others, another user's, or not a regular file); 10 a "
      "store server that cannot be reached.");
  ls->callback(logged(command, ls, cache_cmd::run_ls));
}

void add_show(CLI::App& cache, const Command& command) {
  CLI::App* show = cache.add_subcommand(
      "show", "Show stored choices in full: identity in clear and every candidate's reading");
  show->add_option("what", command->what,
                   "An identity digest (or a prefix of at least 6 hex digits), a key digest, or "
                   "a key");
  show->add_option("--shape", command->shapes,
                   "A key as 'tune --shape' takes it (m=128,n=64; a bucketed op's size finds "
                   "its bucket's entry); repeatable");
  show->add_option("--op", command->op, "With --shape: only this op's choices");
  show->add_flag("--json", command->json, "Write the entries as JSON");
  show->add_option("--store", command->store, kStoreHelp);
  show->callback(logged(command, show, cache_cmd::run_show));
}

void add_rm(CLI::App& cache, const Command& command) {
  CLI::App* rm = cache.add_subcommand("rm", "Remove stored choices");
  rm->add_option("what", command->what,
                 "Identity digests (or prefixes of at least 6 hex digits), key digests, keys or "
                 "op names");
  rm->add_option("--shape", command->shapes,
                 "A key as 'tune --shape' takes it (m=128,n=64); repeatable");
  rm->add_option("--op", command->op, "With --shape: only this op's choices");
  rm->add_flag("--all", command->all, "Remove every stored choice and pending miss");
  rm->add_option("--store", command->store, kStoreHelp);
  rm->callback(logged(command, rm, cache_cmd::run_rm));
}

void add_export_import(CLI::App& cache, const Command& command) {
  CLI::App* exp = cache.add_subcommand(
      "export", "Write one deployable artifact per stored choice (see TUNEKIT_ARTIFACT_DIR)");
  exp->add_option("--dir", command->dir, "The directory to write the artifacts in")->required();
  exp->add_option("--op", command->op, "Only this op's choices");
  exp->add_option("--store", command->store, kStoreHelp);
  exp->callback(logged(command, exp, cache_cmd::run_export));

  CLI::App* imp = cache.add_subcommand(
      "import", "Store the choices of the artifacts (*.json) in a directory that fit this machine");
  imp->add_option("dir", command->dir, "The directory holding the artifacts")->required();
  imp->add_option("--threads,-t", command->threads,
                  "Worker threads the ops are built for, as given to 'tune' (0: one per core)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  imp->add_option("--store", command->store, kStoreHelp);
  imp->callback(logged(command, imp, cache_cmd::run_import));
}

}  // namespace

void register_cache(CLI::App& app) {
  auto command = std::make_shared<CacheCommand>();
  CLI::App* cache = app.add_subcommand(
      "cache", "Look at, remove, export and import the stored choices (the tuning cache)");
  cache->require_subcommand(1);
  add_ls(*cache, command);
  add_show(*cache, command);
  add_rm(*cache, command);
  add_export_import(*cache, command);
  cache_cmd::register_push_pull(*cache);  // cache push / cache pull: cache_sync.cpp
}

}  // namespace tunekit::cli
