// The key ring's file handling. Atomic writes are spelled out step by step
// (not Env::WriteFileAtomically) so that every step is an Env call that the
// fault-injecting Env of the crash tests can fail or cut the power after.
#include "crypto/key_ring.h"

#include <algorithm>

#include "util/time_ns.h"

namespace strata::crypto {
namespace {

constexpr std::string_view kKeySuffix = ".key";
constexpr std::string_view kTempSuffix = ".tmp";
constexpr const char* kLockName = "lock";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

KeyInfo InfoOf(const KeyFile& file) { return KeyInfo{file.KeyIdHex(), file.created_sec, file.params}; }

std::string ParentOf(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

KeyRing::KeyRing(Env* env, std::string dir, ScryptParams params)
    : env_(env), dir_(std::move(dir)), params_(params) {}

Result<std::vector<KeyRing::Entry>> KeyRing::ReadAll() {
  auto names = env_->ListDir(dir_);
  if (!names.ok()) {
    if (names.status().IsNotFound()) return Status::NotFound("no key directory at " + dir_);
    return names.status();
  }
  std::sort(names->begin(), names->end());
  std::vector<Entry> entries;
  for (const std::string& name : *names) {
    if (!EndsWith(name, kKeySuffix)) continue;  // the lock, temporary files a crash left
    std::string path = PathOf(name);
    auto bytes = env_->ReadFile(path);
    if (!bytes.ok()) return bytes.status();
    Result<KeyFile> file = DecodeKeyFile(*bytes, path);
    if (file.ok() && file->KeyIdHex() + std::string(kKeySuffix) != name)
      file = Status::Corruption(path + " holds key " + file->KeyIdHex() + ", not the key its name says");
    entries.push_back(Entry{name, std::move(file)});
  }
  return entries;
}

Result<OpenedRing> KeyRing::OpenSkipping(std::string_view passphrase, const std::string& skip_id) {
  STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadAll());
  size_t tried = 0;
  std::string damaged;
  for (const Entry& e : entries) {
    if (!e.file.ok()) {
      damaged += "; " + e.file.status().message();
      continue;
    }
    if (e.file->KeyIdHex() == skip_id) continue;
    tried++;
    auto master = UnwrapMasterKey(*e.file, passphrase);
    if (master.ok()) return OpenedRing{std::move(master).value(), e.file->KeyIdHex()};
    if (master.status().code() != Status::Code::kInvalidArgument) return master.status();
  }
  if (tried == 0 && damaged.empty() && skip_id.empty()) return Status::NotFound("no key in " + dir_);
  std::string which = skip_id.empty() ? "" : " other than " + skip_id;
  return Status::InvalidArgument("wrong passphrase: it opens no key" + which + " in " + dir_ + " (" +
                                 std::to_string(tried) + " tried)" + damaged);
}

Result<OpenedRing> KeyRing::Open(std::string_view passphrase) { return OpenSkipping(passphrase, ""); }

Result<std::unique_ptr<FileLock>> KeyRing::LockForChange() {
  STRATA_ASSIGN_OR_RETURN(auto lock, env_->LockFile(PathOf(kLockName), LockMode::kExclusive, /*wait=*/true));
  // Temporary files of a writer that died; none is being written now, as we hold the lock.
  if (auto names = env_->ListDir(dir_); names.ok()) {
    for (const std::string& name : *names) {
      if (EndsWith(name, std::string(kKeySuffix) + std::string(kTempSuffix)))
        env_->RemoveFile(PathOf(name)).IgnoreError();  // a leftover is harmless; the next change retries
    }
  }
  return lock;
}

Status KeyRing::WriteKeyFileAtomically(const std::string& name, std::string_view bytes) {
  std::string path = PathOf(name);
  std::string temp = path + std::string(kTempSuffix);
  STRATA_ASSIGN_OR_RETURN(auto file, env_->NewWritableFile(temp));  // mode 0600
  Status s = file->Append(bytes);
  if (s.ok()) s = file->Sync();
  Status closed = file->Close();
  if (s.ok()) s = closed;
  if (s.ok()) s = env_->Rename(temp, path);
  if (!s.ok()) {
    env_->RemoveFile(temp).IgnoreError();  // the failure reported is s; the next change removes it
    return s;
  }
  return env_->SyncDir(dir_);
}

Result<KeyInfo> KeyRing::WriteNewKey(const Key256& master, std::string_view passphrase) {
  STRATA_ASSIGN_OR_RETURN(KeyFile file, WrapMasterKey(master, passphrase, params_, NowNs() / kNanosPerSecond));
  STRATA_RETURN_IF_ERROR(WriteKeyFileAtomically(file.KeyIdHex() + std::string(kKeySuffix), EncodeKeyFile(file)));
  return InfoOf(file);
}

Status KeyRing::RemoveKeyFile(const std::string& id) {
  STRATA_RETURN_IF_ERROR(env_->RemoveFile(PathOf(id + std::string(kKeySuffix))));
  return env_->SyncDir(dir_);
}

Result<KeyInfo> KeyRing::Create(std::string_view passphrase) {
  STRATA_ASSIGN_OR_RETURN(Key256 master, RandomKey());
  return CreateFor(master, passphrase);
}

Result<KeyInfo> KeyRing::CreateFor(const Key256& master, std::string_view passphrase) {
  STRATA_RETURN_IF_ERROR(params_.Check());
  STRATA_RETURN_IF_ERROR(env_->CreateDir(dir_));
  STRATA_RETURN_IF_ERROR(env_->SyncDir(ParentOf(dir_)));
  STRATA_ASSIGN_OR_RETURN(auto lock, LockForChange());
  STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadAll());
  if (!entries.empty()) return Status::AlreadyExists(dir_ + " already holds a key");
  return WriteNewKey(master, passphrase);
}

Result<KeyInfo> KeyRing::Add(std::string_view passphrase, std::string_view new_passphrase) {
  STRATA_RETURN_IF_ERROR(params_.Check());
  STRATA_ASSIGN_OR_RETURN(auto lock, LockForChange());
  STRATA_ASSIGN_OR_RETURN(OpenedRing ring, Open(passphrase));
  return WriteNewKey(ring.master, new_passphrase);
}

Result<std::vector<KeyInfo>> KeyRing::List() {
  STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries, ReadAll());
  std::vector<KeyInfo> keys;
  for (const Entry& e : entries) {
    if (!e.file.ok()) return e.file.status();
    keys.push_back(InfoOf(*e.file));
  }
  return keys;
}

Status KeyRing::Remove(std::string_view passphrase, const std::string& id) {
  STRATA_ASSIGN_OR_RETURN(auto lock, LockForChange());
  STRATA_ASSIGN_OR_RETURN(std::vector<KeyInfo> keys, List());
  bool present = std::any_of(keys.begin(), keys.end(), [&](const KeyInfo& k) { return k.id == id; });
  if (!present) return Status::NotFound("no key " + id + " in " + dir_);
  if (keys.size() == 1) return Status::InvalidArgument("key " + id + " is the last key of " + dir_ + "; it stays");
  STRATA_ASSIGN_OR_RETURN(OpenedRing ring, OpenSkipping(passphrase, id));
  return RemoveKeyFile(id);
}

Result<KeyInfo> KeyRing::ChangePassphrase(std::string_view old_passphrase, std::string_view new_passphrase) {
  STRATA_RETURN_IF_ERROR(params_.Check());
  STRATA_ASSIGN_OR_RETURN(auto lock, LockForChange());
  STRATA_ASSIGN_OR_RETURN(OpenedRing ring, Open(old_passphrase));
  // The new key is durable before the old one goes: a crash in between leaves both.
  STRATA_ASSIGN_OR_RETURN(KeyInfo added, WriteNewKey(ring.master, new_passphrase));
  STRATA_RETURN_IF_ERROR(RemoveKeyFile(ring.key_id));
  return added;
}

}  // namespace strata::crypto
