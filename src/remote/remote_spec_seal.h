// The sealed form of a remote's settings (remotes/NAME/remote.sealed), kept
// in place of remote.json by an encrypted store: the bucket's URL, endpoint
// and region say where its data lives, so they are sealed like the rest
// (docs/format/encryption.md, "Remotes").
//
//   magic "STRATREM" (8) || AES-256-GCM seal (aead.h) of remote.json's text
//
// sealed under the master key's `remote-spec` subkey, with associated data
// "strata remote spec v1" NUL and the remote's name, so that the settings of
// one remote moved under another's name fail to open.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "crypto/aead.h"
#include "remote/remote.h"
#include "util/status.h"

namespace strata {

Result<std::string> SealRemoteSpec(const crypto::Key256& master, const RemoteSpec& spec);
// The settings sealed in `file` for the remote `name`; Corruption naming the
// remote for anything SealRemoteSpec did not make with this key and name.
Result<RemoteSpec> OpenRemoteSpec(const crypto::Key256& master, const std::string& name, std::string_view file);

}  // namespace strata
