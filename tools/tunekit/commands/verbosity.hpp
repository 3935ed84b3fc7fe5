// -v/--verbose and -q/--quiet, given before or after the command, and the tool's log on
// stderr built from them and TUNEKIT_LOG.
#pragma once

#include "tunekit/log.hpp"

namespace CLI {
class App;
}

namespace tunekit::cli {

// On the root app, before the commands are registered (they inherit its fallthrough, so
// `tunekit tune sgemm -v` works as `tunekit -v tune sgemm`).
void add_verbosity_flags(CLI::App& root);
// TUNEKIT_LOG's level (unset: info), each -v one level more (to debug), each -q one less (to
// error). `app` is the root or any of its commands.
LogLevel tool_log_level(const CLI::App& app);
// The tool's log: lines on stderr at tool_log_level.
Log tool_log(const CLI::App& app);
// Progress bars and notes show at info and above (-q hides them).
bool shows_progress(const CLI::App& app);

}  // namespace tunekit::cli
