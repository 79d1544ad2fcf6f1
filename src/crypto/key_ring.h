// KeyRing: the directory of a store's key files, one per passphrase, all
// wrapping the same master key (like restic's keys/). It creates the first
// key, adds and removes keys, lists them and changes a passphrase.
//
// Every key file is mode 0600 and written atomically through the Env (a
// temporary file, fsync, rename, fsync of the directory), so a crash leaves
// either the whole file or none. Changing a passphrase writes the new key
// file, durably, before it removes the old one: whenever the process dies,
// the old passphrase or the new one (or both) opens the ring. A key is
// removed only with the passphrase of another key, so the last one never is.
// Mutations take an exclusive lock on the directory's "lock" file, so two
// processes changing keys at once do not step on each other's files.
//
// Thread-safety: a KeyRing is used by one thread at a time; the Env must
// outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crypto/aead.h"
#include "crypto/key_file.h"
#include "crypto/passphrase_kdf.h"
#include "env/env.h"
#include "util/status.h"

namespace strata::crypto {

struct KeyInfo {
  std::string id;  // 32 hex digits, the key file's name without ".key"
  int64_t created_sec = 0;
  ScryptParams params;
};

struct OpenedRing {
  Key256 master;
  std::string key_id;  // the key the passphrase opened
};

class KeyRing {
 public:
  // `params` are those of the key files this ring writes (tests pass small ones).
  KeyRing(Env* env, std::string dir, ScryptParams params = {});

  // Creates the directory and its first key, wrapping a new random master
  // key. AlreadyExists if the directory already holds a key.
  Result<KeyInfo> Create(std::string_view passphrase);
  // The same wrapping an existing master key (a store made with another
  // store's key).
  Result<KeyInfo> CreateFor(const Key256& master, std::string_view passphrase);
  // The master key, from the first key file the passphrase unwraps; a
  // passphrase that opens none is InvalidArgument ("wrong passphrase").
  Result<OpenedRing> Open(std::string_view passphrase);
  // Adds a key for new_passphrase; passphrase must open the ring.
  Result<KeyInfo> Add(std::string_view passphrase, std::string_view new_passphrase);
  // Every key, sorted by id; damaged key files are an error naming them.
  Result<std::vector<KeyInfo>> List();
  // Removes key `id`; passphrase must open another key of the ring, so the
  // ring keeps a key that someone can open.
  Status Remove(std::string_view passphrase, const std::string& id);
  // Wraps the same master key under new_passphrase and removes the key that
  // old_passphrase opened; returns the new key. No data is rewritten.
  Result<KeyInfo> ChangePassphrase(std::string_view old_passphrase, std::string_view new_passphrase);

  const std::string& dir() const { return dir_; }

 private:
  struct Entry {
    std::string name;  // file name in dir_
    Result<KeyFile> file;
  };
  Result<std::vector<Entry>> ReadAll();
  // Opens with any key but `skip_id` (empty: any key).
  Result<OpenedRing> OpenSkipping(std::string_view passphrase, const std::string& skip_id);
  Result<std::unique_ptr<FileLock>> LockForChange();
  Result<KeyInfo> WriteNewKey(const Key256& master, std::string_view passphrase);
  Status WriteKeyFileAtomically(const std::string& name, std::string_view bytes);
  Status RemoveKeyFile(const std::string& id);
  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

  Env* const env_;
  const std::string dir_;
  const ScryptParams params_;
};

}  // namespace strata::crypto
