// Shared by the cache subcommands: ls, show and rm (cache.cpp), export and import
// (cache_transfer.cpp). Private to the tunekit tool.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/log.hpp"
#include "tunekit/store.hpp"

namespace CLI {
class App;
}

namespace tunekit::cli::cache_cmd {

struct CacheCommand {
  std::string store;  // --store; empty: the environment's SQLite file
  bool json = false;
  std::string op;                   // --op filter (ls, export)
  std::vector<std::string> what;    // show / rm arguments
  std::vector<std::string> shapes;  // show / rm --shape: keys, matched as keys only
  bool all = false;                 // rm --all
  bool pending = false;             // ls --pending
  std::string dir;                  // export --dir, import D
  int threads = 0;                  // import: the pool the ops are built with (as tune)
  Log log;                          // the tool's log (-v/-q, TUNEKIT_LOG)
};

struct OpenedStore {
  std::unique_ptr<Store> store;  // nullptr when the file does not exist (and was not created)
  std::string spec;
  std::string path;                        // the SQLite file, when the spec names one
  StoreState state = StoreState::missing;  // what opening found
  std::string why;                         // its cause, when not ready
};

// Looks at the store the command names without creating it and without warning: `state`
// says what was found (ls reports each state itself). A malformed spec is a UsageError.
OpenedStore look_at_store(const CacheCommand& command);

// Opens the store the command names. With `create` false a missing SQLite file is not
// created: `store` stays null and the caller says so. An unusable file is a UsageError (the
// library has already warned, naming the file and why). With `write` a read-only store is a
// UsageError too.
OpenedStore open_cache_store(const CacheCommand& command, bool create, bool write = false);

// Reads a typed key as its built-in op does (`n=1000` finds `n=1000,dtype=f32`; a bucketed
// op's key finds its bucket's entry), for find_stored: cache show/rm --shape, report --key.
KeyCanonicaliser catalog_keys();

// For commands that have nothing to work on without an existing store.
Store& require_existing(const OpenedStore& opened);

// The first hex digits of a digest, as `ls` shows them.
std::string short_digest(const std::string& digest);

void run_export(const CacheCommand& command);  // cache_transfer.cpp
void run_import(const CacheCommand& command);  // cache_transfer.cpp

// cache push and cache pull, registered on the `cache` subcommand (cache_sync.cpp).
void register_push_pull(CLI::App& cache);

}  // namespace tunekit::cli::cache_cmd
