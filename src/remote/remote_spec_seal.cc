#include "remote/remote_spec_seal.h"

#include "crypto/subkeys.h"

namespace strata {
namespace {

constexpr std::string_view kMagic = "STRATREM";
// A remote.json is a few hundred bytes; anything far larger is not one.
constexpr size_t kMaxFile = 64 * 1024;

std::string AssociatedData(const std::string& name) {
  std::string aad = "strata remote spec v1";
  aad.push_back('\0');
  return aad + name;
}

}  // namespace

Result<std::string> SealRemoteSpec(const crypto::Key256& master, const RemoteSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 key, crypto::DeriveSubkey(master, crypto::kSubkeyRemoteSpec));
  std::string text = RemoteSpecToJson(spec);
  auto sealed = crypto::Seal(key, text, AssociatedData(spec.name));
  crypto::Wipe(text);
  if (!sealed.ok()) return sealed.status();
  return std::string(kMagic) + *sealed;
}

Result<RemoteSpec> OpenRemoteSpec(const crypto::Key256& master, const std::string& name, std::string_view file) {
  const std::string what = "remote " + name + ": remote.sealed";
  if (file.size() > kMaxFile || file.substr(0, kMagic.size()) != kMagic ||
      file.size() < kMagic.size() + crypto::kSealOverhead)
    return Status::Corruption(what + " is not a sealed remote's settings");
  file.remove_prefix(kMagic.size());
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 key, crypto::DeriveSubkey(master, crypto::kSubkeyRemoteSpec));
  STRATA_ASSIGN_OR_RETURN(std::string text, crypto::Open(key, file, AssociatedData(name), what));
  auto spec = RemoteSpecFromJson(name, text);
  crypto::Wipe(text);
  return spec;
}

}  // namespace strata
