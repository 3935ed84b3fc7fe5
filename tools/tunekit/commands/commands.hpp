// The subcommands of the tunekit tool. Each registers itself on the app; its callback calls
// the library and throws tunekit::UsageError for anything the user must fix.
#pragma once

namespace CLI {
class App;
}

namespace tunekit::cli {

// tunekit ops [--json]: the built-in ops, their key fields and candidate counts.
void register_ops(CLI::App& app);
// tunekit tune <op> --shape k=v,...: searches one key and reports every candidate.
void register_tune(CLI::App& app);

}  // namespace tunekit::cli
