// Passphrases of encrypted stores: where a command gets one, and the master
// keys this process has unlocked with them or read from a master key file
// (--key-file, crypto/master_key_file.h).
//
// A passphrase comes from a file (--password-file, --new-password-file),
// else an environment variable (STRATA_PASSWORD, STRATA_NEW_PASSWORD), else a
// prompt on the controlling terminal with echo off. Without any of these the
// command is refused: it never waits on a pipe for a passphrase nobody types.
#pragma once

#include <string>

#include "crypto/aead.h"
#include "util/status.h"

namespace strata::cli {

// Where one passphrase comes from.
struct PassphraseSource {
  std::string file;         // a file holding it (one trailing newline is dropped); empty: none
  const char* option = "";   // the option that names the file, for messages: "--password-file"
  const char* env_var = "";  // e.g. "STRATA_PASSWORD"
  std::string prompt;       // asked on the terminal, e.g. "passphrase for store X: "
  bool confirm = false;     // a new passphrase: asked twice on a terminal, both must match
};

// The passphrase, or InvalidArgument naming every way to give it (`what`
// says what it is for) when no source has one. Never empty.
Result<std::string> ReadPassphrase(const PassphraseSource& source, const std::string& what);

// Whether UnlockStoreKey may take a key kept by `strata key unlock`
// (cli/kept_key.h). Commands that make the key last longer than the unlock
// (key export, key unlock itself) need the passphrase or key file.
enum class KeptKey { kUse, kIgnore };

// The master key of the encrypted store at path, unlocked once per process
// and kept for later opens of the same store (a mount opens it again in the
// daemon it forks, which has no terminal). First the key kept in the kernel
// keyring by `strata key unlock`, if any and unless `kept` says otherwise,
// once the store's key check accepts it; else a key_file (a master key
// file), once it is checked to be this store's; else the passphrase from
// `source`. A wrong passphrase is refused before the store is opened.
Result<crypto::Key256> UnlockStoreKey(const std::string& path, const PassphraseSource& source,
                                      const std::string& key_file, KeptKey kept = KeptKey::kUse);

// The master key in the master key file at path. Refused, naming the file,
// unless it is a regular file that only its owner can read or write (mode
// 0600 or stricter), as ssh refuses a private key others can read.
Result<crypto::Key256> ReadMasterKeyFile(const std::string& path);

}  // namespace strata::cli
