// Whether a sandbox's program exists, asked before bwrap runs it.
//
// bwrap reports a program it cannot execute as "bwrap: execvp ...: No such
// file or directory" and exit status 1, which cannot be told from the
// program's own failure. So `strata exec` looks the program up first, as
// execvp would inside the sandbox (the PATH it is given, the sandbox's view of
// the file tree), and answers as a shell does: 127 when it is not found, 126
// when it is found but cannot be executed.
// Only a sure answer counts: a path that cannot be followed from outside (a
// link leaving the working tree under --at, the sandbox's own /dev, /proc and
// /tmp) is taken as found, and bwrap has the last word.
// Thread-safety: pure functions over the file system.
#pragma once

#include <string>

#include "sandbox/bwrap_args.h"

namespace strata::sandbox {

enum class CommandLookup { kFound, kNotFound, kNotExecutable };

// Looks up spec.command[0]: a name with a '/' as it is (relative to the
// sandbox's working directory), any other in each directory of path_var (the
// PATH the program gets), the first that is an executable file winning.
// REQUIRES: spec passed BwrapArgs (a command, absolute paths).
CommandLookup LookUpCommand(const SandboxSpec& spec, const std::string& path_var);

// The exit status a shell gives a command it could not run (127 or 126).
int ExitStatusOf(CommandLookup lookup);

}  // namespace strata::sandbox
