// The subcommands of the tunekit tool. Each registers itself on the app; its callback calls
// the library and throws tunekit::UsageError for anything the user must fix.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace tunekit::cli {

// tunekit ops [--json]: the built-in ops, their key fields and candidate counts.
void register_ops(CLI::App& app);
// tunekit tune <op> --shape k=v,...: searches one key and reports every candidate.
void register_tune(CLI::App& app);
// tunekit cache ls|show|rm|export|import: the stored choices.
void register_cache(CLI::App& app);
void register_space(CLI::App& app);   // tunekit space FILE [--list N] [--json]
void register_replay(CLI::App& app);  // tunekit replay --dataset F --strategy S ...
// tunekit import-kt FILE [--store SPEC] [--json]: a Kernel Tuner cache file as stored evidence.
void register_import_kt(CLI::App& app);
// tunekit devices [--json]: every backend's devices (cpu, each OpenCL device).
void register_devices(CLI::App& app);
// tunekit calibrate [--json] [--out F] [--quick]: this device's envelope for the cost model.
void register_calibrate(CLI::App& app);
// tunekit explain <op> --shape ... [--profile F] [--json]: the cost model's view of a key.
void register_explain(CLI::App& app);
void register_strategies(CLI::App& app);  // tunekit strategies [--json]
// tunekit stack tune|explain|ls: a stack workload's operator, graph and application decisions.
void register_stack(CLI::App& app);
// tunekit report --out FILE [--op OP] [--key KEY]...: the stored decisions as an HTML page.
void register_report(CLI::App& app);
// tunekit worker --store postgresql://...: evaluates points of the store's shared searches.
void register_worker(CLI::App& app);
// tunekit trial-worker --fd N: (internal) a spawned trial worker of an OpenCL/CUDA search.
void register_trial_worker(CLI::App& app);

// A --store value as open_store takes it: empty is $TUNEKIT_STORE, else the environment's
// SQLite file; "sqlite" is that file ($TUNEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tunekit, else
// ~/.cache/tunekit) whatever TUNEKIT_STORE says; others (sqlite:PATH, postgresql://...) as given.
std::string resolve_store_spec(const std::string& given);

}  // namespace tunekit::cli
