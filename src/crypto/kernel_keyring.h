// Secrets kept for a while in the Linux kernel's keyring of the calling user
// (keyrings(7)): what `strata key unlock` uses to spare later commands the
// passphrase, as ssh-agent or gpg-agent would, without a process of its own.
//
// A kept secret is a "user" key in the user keyring (@u), which every process
// of the same uid can reach, whatever its login session. It has a timeout set
// by the kernel: once it has passed, the kernel refuses to read the key and
// removes it. Its permissions give the owning uid (and root, which can read
// any key) read access and nobody else anything. It never touches the disk
// (the kernel keeps it in unswappable memory only if the whole system does not
// swap kernel memory, which Linux never does).
//
// Why the user keyring and not the session keyring: a process that has no
// session keyring of its own (a shell under sudo, a container, a cron job)
// would get a fresh anonymous one when it adds a key, and the key would go
// with the process; the user keyring is there for every process of the uid.
//
// Errors: Unsupported, saying what the kernel answered, when the keyring
// cannot be used at all (no keyring support, or a seccomp filter refusing
// the calls, as container runtimes' default profiles do).
//
// Thread-safety: free functions over the kernel's state; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace strata::crypto {

// Keeps secret under description in the user keyring for timeout_sec
// seconds (at least 1), replacing a key kept under the same description.
Status KeepInUserKeyring(const std::string& description, std::string_view secret, uint32_t timeout_sec);

// The secret kept under description, or nullopt when there is none (never
// kept, dropped, or past its timeout). At most max_size bytes are read; a
// larger key is not ours, and is returned as nullopt too.
Result<std::optional<std::string>> FindInUserKeyring(const std::string& description, size_t max_size);

// Drops the key kept under description. False when there was none.
Result<bool> DropFromUserKeyring(const std::string& description);

}  // namespace strata::crypto
