// key add|list|remove|passwd: the passphrases of an encrypted store, one key
// file each in the store's keys/ (crypto/key_ring.h does the work). Every
// one of them needs a passphrase that opens the store; none rewrites data.
// key export: the master key itself, in a master key file for --key-file.
// key unlock|lock: the master key kept in the kernel keyring for a while
// (cli/kept_key.h), so that commands meanwhile need no passphrase.
#include <fmt/format.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <functional>

#include "cli/cli.h"
#include "cli/kept_key.h"
#include "crypto/key_ring.h"
#include "crypto/master_key_file.h"

namespace strata::cli {
namespace {

// The selected store's key ring and a passphrase that opens it.
struct OpenedKeys {
  std::unique_ptr<Env> env;  // confined to the store; outlives the ring
  std::string root;
  std::unique_ptr<crypto::KeyRing> ring;
  std::string passphrase;
  std::string key_id;  // the key the passphrase opened

  ~OpenedKeys() { crypto::Wipe(passphrase); }
};

Result<std::unique_ptr<OpenedKeys>> OpenKeys(const Globals& g) {
  const std::string path = StorePath(g);
  STRATA_ASSIGN_OR_RETURN(StoreConfig config, Store::ReadConfig(path));
  auto keys = std::make_unique<OpenedKeys>();
  STRATA_ASSIGN_OR_RETURN(keys->env, Store::TrustedEnv(path, Env::Default(), &keys->root));
  if (!config.encrypted())
    return Status::InvalidArgument("the store at " + keys->root + " is not encrypted: it has no keys");
  keys->ring = std::make_unique<crypto::KeyRing>(keys->env.get(), Store::KeysDir(keys->root));
  STRATA_ASSIGN_OR_RETURN(keys->passphrase,
                          ReadPassphrase(StorePassphrase(g, keys->root),
                                         "the store at " + keys->root + " is encrypted and needs its passphrase"));
  // Checked before anything else, so that a wrong one changes nothing.
  auto opened = keys->ring->Open(keys->passphrase);
  if (!opened.ok()) return opened.status().WithContext("store " + keys->root);
  keys->key_id = opened->key_id;
  return keys;
}

Result<std::string> NewPassphrase(const std::string& file) {
  PassphraseSource source;
  source.file = file;
  source.option = "--new-password-file";
  source.env_var = "STRATA_NEW_PASSWORD";
  source.prompt = "new passphrase: ";
  source.confirm = true;
  return ReadPassphrase(source, "a new passphrase is needed");
}

int RunKeyList(const Globals& g) {
  auto keys = OpenKeys(g);
  if (!keys.ok()) return Fail(keys.status());
  auto list = (*keys)->ring->List();
  if (!list.ok()) return Fail(list.status());
  if (g.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const crypto::KeyInfo& k : *list)
      j.push_back({{"id", k.id},
                   {"current", k.id == (*keys)->key_id},
                   {"created", k.created_sec},
                   {"kdf", {{"name", "scrypt"}, {"log2_n", k.params.log2_n}, {"r", k.params.r}, {"p", k.params.p}}}});
    PrintJson(j);
    return kExitOk;
  }
  for (const crypto::KeyInfo& k : *list)
    fmt::print("{} {}  {}  scrypt N=2^{} r={} p={}\n", k.id == (*keys)->key_id ? '*' : ' ', k.id,
               FormatTime(k.created_sec, 0), k.params.log2_n, k.params.r, k.params.p);
  return kExitOk;
}

// key add and key passwd: change(keys, new passphrase) makes the new key.
int RunWithNewPassphrase(
    const Globals& g, const std::string& new_file,
    const std::function<Result<crypto::KeyInfo>(OpenedKeys&, const std::string&)>& change,
    const std::function<void(const OpenedKeys&, const crypto::KeyInfo&)>& report) {
  auto keys = OpenKeys(g);
  if (!keys.ok()) return Fail(keys.status());
  auto fresh = NewPassphrase(new_file);
  if (!fresh.ok()) return Fail(fresh.status());
  auto made = change(**keys, *fresh);
  crypto::Wipe(*fresh);
  if (!made.ok()) return Fail(made.status());
  report(**keys, *made);
  return kExitOk;
}

int RunKeyAdd(const Globals& g, const std::string& new_file) {
  return RunWithNewPassphrase(
      g, new_file, [](OpenedKeys& k, const std::string& fresh) { return k.ring->Add(k.passphrase, fresh); },
      [](const OpenedKeys&, const crypto::KeyInfo& added) { fmt::print("added key {}\n", added.id); });
}

int RunKeyRemove(const Globals& g, const std::string& id) {
  auto keys = OpenKeys(g);
  if (!keys.ok()) return Fail(keys.status());
  if (Status s = (*keys)->ring->Remove((*keys)->passphrase, id); !s.ok()) return Fail(s);
  fmt::print("removed key {}\n", id);
  return kExitOk;
}

int RunKeyPasswd(const Globals& g, const std::string& new_file) {
  return RunWithNewPassphrase(
      g, new_file,
      [](OpenedKeys& k, const std::string& fresh) { return k.ring->ChangePassphrase(k.passphrase, fresh); },
      [](const OpenedKeys& k, const crypto::KeyInfo& changed) {
        fmt::print("changed the passphrase: key {} replaces key {} (no data was rewritten)\n", changed.id,
                   k.key_id);
      });
}

// Writes bytes to a new file at path, mode 0600, refusing to replace
// anything: the file is complete when it appears (written aside, then renamed).
Status WriteNewPrivateFile(const std::string& path, std::string_view bytes) {
  Env* env = Env::Default();
  const std::string refused = path + " exists; it was left as it is (give --out a new file)";
  if (env->Exists(path)) return Status::AlreadyExists(refused);
  const std::filesystem::path target(path);
  std::string dir = target.parent_path().string();
  if (dir.empty()) dir = ".";
  const std::string aside = dir + "/." + target.filename().string() + ".new." + std::to_string(::getpid());
  STRATA_RETURN_IF_ERROR(env->WriteFileAtomically(aside, bytes));
  if (Status s = env->RenameNoReplace(aside, path); !s.ok()) {
    (void)env->RemoveFile(aside);
    return env->Exists(path) ? Status::AlreadyExists(refused) : s;
  }
  return env->SyncDir(dir);
}

int RunKeyExport(const Globals& g, const std::string& out) {
  const std::string path = StorePath(g);
  auto config = Store::ReadConfig(path);
  if (!config.ok()) return Fail(config.status());
  if (!config->encrypted())
    return Fail(Status::InvalidArgument("the store at " + path + " is not encrypted: it has no key"));
  // Not from a kept key: a copy that outlives the unlock needs the passphrase.
  auto master = UnlockStoreKey(path, StorePassphrase(g, path), StoreKeyFile(g), KeptKey::kIgnore);
  if (!master.ok()) return Fail(master.status());
  std::string bytes = crypto::EncodeMasterKeyFile(*master);
  Status written = WriteNewPrivateFile(out, bytes);
  crypto::Wipe(bytes);
  if (!written.ok()) return Fail(written);
  fmt::print("wrote the master key of the store at {} to {} (mode 0600)\n", path, out);
  fmt::print("anyone who can read that file can read the store, with no passphrase, for as long as it exists: "
             "no 'key passwd' or 'key remove' takes that away\n");
  return kExitOk;
}

// The selected store's config, refused unless it is encrypted; *root gets
// its canonical path.
Result<StoreConfig> EncryptedConfig(const Globals& g, std::string* root) {
  const std::string path = StorePath(g);
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Env> inside, Store::TrustedEnv(path, Env::Default(), root));
  STRATA_ASSIGN_OR_RETURN(StoreConfig config, Store::ReadConfig(*root));
  if (!config.encrypted())
    return Status::InvalidArgument("the store at " + *root + " is not encrypted: it has no key to keep");
  return config;
}

int RunKeyUnlock(const Globals& g, const std::string& duration) {
  auto seconds = duration.empty() ? Result<uint32_t>(kDefaultKeptSeconds) : ParseKeptDuration(duration);
  if (!seconds.ok()) return Fail(seconds.status());
  std::string root;
  auto config = EncryptedConfig(g, &root);
  if (!config.ok()) return Fail(config.status());
  // The passphrase or key file every time: keeping the key longer is as much
  // a use of it as reading the store.
  auto master = UnlockStoreKey(root, StorePassphrase(g, root), StoreKeyFile(g), KeptKey::kIgnore);
  if (!master.ok()) return Fail(master.status());
  if (Status s = KeepStoreKey(*config, *master, *seconds); !s.ok())
    return Fail(s.WithContext("keeping the key of the store at " + root));
  fmt::print("kept the key of the store at {} in the kernel keyring for {} s (until {}): commands on it need no "
             "passphrase until then or 'strata key lock'\n",
             root, *seconds, FormatTime(static_cast<int64_t>(::time(nullptr)) + *seconds, 0));
  fmt::print("until then any process of this user, and root, can read that key\n");
  return kExitOk;
}

int RunKeyLock(const Globals& g) {
  std::string root;
  auto config = EncryptedConfig(g, &root);
  if (!config.ok()) return Fail(config.status());
  auto dropped = DropStoreKey(*config);
  if (!dropped.ok()) return Fail(dropped.status().WithContext("dropping the key of the store at " + root));
  if (*dropped)
    fmt::print("dropped the kept key of the store at {}: commands on it need the passphrase again\n", root);
  else
    fmt::print("no key was kept for the store at {}; nothing to drop\n", root);
  return kExitOk;
}

}  // namespace

void RegisterKeyCommands(CLI::App& app, Globals& g, int* exit_code) {
  auto* key = app.add_subcommand(
      "key", "the keys of an encrypted store: add, list, remove, passwd, export, unlock, lock");
  key->require_subcommand(1);

  static std::string add_file, passwd_file, remove_id;
  auto* add = key->add_subcommand("add", "add a passphrase (STRATA_NEW_PASSWORD, --new-password-file or a prompt)");
  add->add_option("--new-password-file", add_file, "the new passphrase, from this file");
  add->callback([&g, exit_code] { *exit_code = RunKeyAdd(g, add_file); });

  auto* list = key->add_subcommand("list", "list the store's keys; '*' marks the one the passphrase opened");
  list->add_flag("--json", g.json, "machine-readable output");
  list->callback([&g, exit_code] { *exit_code = RunKeyList(g); });

  auto* remove = key->add_subcommand("remove", "remove a key (with the passphrase of another one)");
  remove->add_option("ID", remove_id, "the key's id, as 'strata key list' shows it")->required();
  remove->callback([&g, exit_code] { *exit_code = RunKeyRemove(g, remove_id); });

  auto* passwd = key->add_subcommand("passwd", "change the passphrase: re-wrap the key, rewrite no data");
  passwd->add_option("--new-password-file", passwd_file, "the new passphrase, from this file");
  passwd->callback([&g, exit_code] { *exit_code = RunKeyPasswd(g, passwd_file); });

  static std::string export_out;
  auto* exp = key->add_subcommand("export", "write the master key to a new file, for --key-file (unattended use)");
  exp->add_option("--out", export_out, "the file to write (mode 0600; never overwritten)")->required();
  exp->callback([&g, exit_code] { *exit_code = RunKeyExport(g, export_out); });

  static std::string unlock_for;
  auto* unlock = key->add_subcommand(
      "unlock", "keep the store's key in the kernel keyring for a while: later commands need no passphrase");
  unlock->add_option("--for", unlock_for, "how long: 90s, 15m, 2h (1s to 24h; default 15m)");
  unlock->callback([&g, exit_code] { *exit_code = RunKeyUnlock(g, unlock_for); });

  auto* lock = key->add_subcommand("lock", "drop the key 'key unlock' kept: commands need the passphrase again");
  lock->callback([&g, exit_code] { *exit_code = RunKeyLock(g); });
}

}  // namespace strata::cli
