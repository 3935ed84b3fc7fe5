// The tunekit command-line tool: parses, then hands over to one subcommand (commands/).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands/commands.hpp"
#include "commands/verbosity.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/terminal_text.hpp"

namespace {

// How a command-line error reads: "tunekit: error: ..." and the --help to run.
std::string failure_message(const CLI::App* app, const CLI::Error& error) {
  std::string command = app->get_name();
  for (const CLI::App* sub : app->get_subcommands()) command += fmt::format(" {}", sub->get_name());
  std::string what = error.what();
  const std::vector<std::string> extra = app->remaining();
  if (app->get_subcommands().empty() && !extra.empty()) {
    // A word where a command should be: say which commands there are.
    std::string known;
    for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
      known += fmt::format("{}{}", known.empty() ? "" : ", ", sub->get_name());
    what = fmt::format("unknown command '{}': use one of {}", extra.front(), known);
  }
  return fmt::format("{}: error: {}\nRun '{} --help' for the options.\n", app->get_name(), what,
                     command);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("tunekit: picks the fastest correct implementation of an op on this machine",
               "tunekit");
  app.require_subcommand(1);
  app.footer("Run 'tunekit <command> --help' for the options of one command.");
  app.failure_message(failure_message);
  tunekit::cli::add_verbosity_flags(app);  // before the commands: they inherit its fallthrough
  // TUNEKIT_VERSION, TUNEKIT_COMMIT and TUNEKIT_BACKENDS come from CMake (tools/tunekit/).
  app.set_version_flag("--version", fmt::format("tunekit {}\ncommit: {}\nbackends: {}",
                                                TUNEKIT_VERSION, TUNEKIT_COMMIT, TUNEKIT_BACKENDS));
  tunekit::cli::register_ops(app);
  tunekit::cli::register_tune(app);
  tunekit::cli::register_cache(app);
  tunekit::cli::register_space(app);
  tunekit::cli::register_replay(app);
  tunekit::cli::register_import_kt(app);
  tunekit::cli::register_devices(app);
  tunekit::cli::register_calibrate(app);
  tunekit::cli::register_explain(app);
  tunekit::cli::register_strategies(app);
  tunekit::cli::register_stack(app);
  tunekit::cli::register_report(app);
  tunekit::cli::register_worker(app);
  tunekit::cli::register_trial_worker(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);  // --help prints usage and exits 0; a bad option prints why
  } catch (const tunekit::UsageError& e) {
    std::cerr << "tunekit: error: " << tunekit::terminal_safe(e.what(), /*keep_newlines=*/true)
              << '\n';
    return 2;
  } catch (const tunekit::FatalError& e) {
    std::cerr << "tunekit: fatal: " << tunekit::terminal_safe(e.what(), /*keep_newlines=*/true)
              << '\n';
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "tunekit: internal error: "
              << tunekit::terminal_safe(e.what(), /*keep_newlines=*/true) << '\n';
    return 4;
  }
  return 0;
}
