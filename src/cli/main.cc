// strata: the command-line entry point. Parses options with CLI11 and hands
// over to the command families in cmd_*.cc.
#include <sys/stat.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "cli/cli_reference.h"
#include "cli/did_you_mean.h"
#include "env/env.h"

namespace {

// The word CLI11 will take for the command: the first argument that is no
// global option (nor the value of one).
std::optional<std::string_view> CommandWord(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::string_view arg = argv[i];
    if (arg == "--store" || arg == "--remote" || arg == "--password-file" ||
        arg == "--key-file") {
      i++;
      continue;
    }
    if (arg.starts_with('-')) continue;  // --store=DIR, --help, --version
    return arg;
  }
  return std::nullopt;
}

// CLI11 takes an unknown command for an extra argument and says "A
// subcommand is required", which hides the typo: name it, and what was meant.
// Returns whether the command is unknown (the message printed).
bool ReportUnknownCommand(const CLI::App& app, int argc, char** argv) {
  auto word = CommandWord(argc, argv);
  if (!word) return false;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(std::string(*word))) return false;
    names.push_back(sub->get_name());
  }
  std::string hint = "run 'strata --help' for the list of commands";
  if (auto near = strata::cli::ClosestName(*word, names)) hint = "did you mean '" + *near + "'?";
  std::fprintf(stderr, "strata: unknown command '%.*s'; %s\n", static_cast<int>(word->size()), word->data(),
               hint.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace strata::cli;
  // Everything strata creates is its user's alone: SQLite makes its databases
  // (index, workspace, import cache) and their WAL files 0644, and a few state
  // files (a mount's record) were made with 0666, less the caller's umask.
  // Exported files and files created through a mount get their modes
  // explicitly, so this changes none of those.
  const mode_t caller_umask = ::umask(077);
  // A daemon keeps packs and workspace files open: use every descriptor the
  // system allows this user (the soft limit is often 1024 of a hard 1M).
  strata::RaiseFdLimitToHard();
  CLI::App app{"strata: a versioned, deduplicating filesystem", "strata"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "strata 0.1.0 (store format 1)");
  app.fallthrough();  // global options may follow the subcommand
  Globals globals;
  globals.caller_umask = caller_umask;  // what `strata exec` gives its program
  app.add_option("--store", globals.store, "store directory (default: $STRATA_STORE, then ~/.local/share/strata)");
  app.add_option("--remote", globals.remote, "work on the store at this remote (see 'strata remote')");
  auto* password_file = app.add_option(
      "--password-file", globals.password_file,
      "the passphrase of an encrypted store, from this file (else $STRATA_KEY_FILE, $STRATA_PASSWORD, a prompt)");
  app.add_option("--key-file", globals.key_file,
                 "open an encrypted store with the master key in this file ('strata key export'), no passphrase; "
                 "else $STRATA_KEY_FILE")
      ->excludes(password_file);
  int exit_code = kExitOk;
  RegisterStoreCommands(app, globals, &exit_code);
  RegisterSnapshotCommands(app, globals, &exit_code);
  RegisterHistoryCommands(app, globals, &exit_code);
  RegisterMountCommands(app, globals, &exit_code);
  RegisterCommitCommands(app, globals, &exit_code);
  RegisterStatusCommands(app, globals, &exit_code);
  RegisterGcCommands(app, globals, &exit_code);
  RegisterForgetCommands(app, globals, &exit_code);
  RegisterRemoteCommands(app, globals, &exit_code);
  RegisterExecCommands(app, globals, &exit_code);
  RegisterKeyCommands(app, globals, &exit_code);
  if (argc == 2 && std::string_view(argv[1]) == kCliReferenceFlag) {
    PrintJson(CliReference(app));  // for the build: man pages, completions
    return kExitOk;
  }
  if (ReportUnknownCommand(app, argc, argv)) return kExitUsage;
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return app.got_subcommand("exec") ? kExecFailed : kExitUsage;
  }
  std::fflush(stdout);
  if (std::ferror(stdout)) {
    std::fprintf(stderr, "strata: writing the output failed\n");
    return kExitError;
  }
  return exit_code;
}
