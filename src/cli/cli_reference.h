// The command line's own description of itself, as data: every command and
// subcommand with its options and positional arguments, taken from the CLI11
// tables the commands register. The man pages and the shell completions are
// generated from it at build time (scripts/gen_cli_docs.py), so they cannot
// drift from what the parser accepts.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace strata::cli {

// The option a build step passes, alone, to print the reference as JSON. It is
// not listed in --help: it is an interface of the build, not of users.
inline constexpr const char* kCliReferenceFlag = "--cli-reference";

// {"name", "description", "options": [...], "positionals": [...], "commands": [...]}
// where an option is {"names", "description", "takes_value", "required", "type"}
// and a positional {"name", "description", "required", "repeats"}; commands nest.
nlohmann::ordered_json CliReference(const CLI::App& app);

}  // namespace strata::cli
