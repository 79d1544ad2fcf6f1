#include "remote/remote.h"

#include <cctype>
#include <nlohmann/json.hpp>

#include "remote/gc_protocol.h"
#include "remote/remote_spec_seal.h"
#include "remote/s3_backend.h"
#include "remote/s3_xml.h"
#include "remote/seal_grants.h"
#include "store/index.h"
#include "store/store_cipher.h"
#include "util/time_ns.h"

namespace strata {
namespace {

constexpr const char* kConfigKey = "config.json";

// A plain store keeps a remote's settings in remote.json; an encrypted one
// sealed in remote.sealed (remote_spec_seal.h). Either file makes the remote.
std::string SpecPath(const std::string& dir) { return dir + "/remote.json"; }
std::string SealedSpecPath(const std::string& dir) { return dir + "/remote.sealed"; }
bool SpecExists(Env* env, const std::string& dir) {
  return env->Exists(SealedSpecPath(dir)) || env->Exists(SpecPath(dir));
}

Status WriteSpec(Env* env, const std::string& dir, const RemoteSpec& spec, const crypto::Key256* master) {
  if (master == nullptr) return env->WriteFileAtomically(SpecPath(dir), RemoteSpecToJson(spec));
  STRATA_ASSIGN_OR_RETURN(std::string sealed, SealRemoteSpec(*master, spec));
  return env->WriteFileAtomically(SealedSpecPath(dir), sealed);
}

// An encrypted store's remote added before its settings were sealed keeps a
// plaintext remote.json: the first read with the key seals it and removes the
// plaintext (sealed copy durable first, so a crash leaves one readable copy;
// a later read removes a plaintext left beside a sealed one).
Status SealPlainSpec(Env* env, const std::string& dir, const RemoteSpec& spec, const crypto::Key256& master) {
  if (!env->Exists(SealedSpecPath(dir))) STRATA_RETURN_IF_ERROR(WriteSpec(env, dir, spec, &master));
  STRATA_RETURN_IF_ERROR(env->RemoveFile(SpecPath(dir)));
  return env->SyncDir(dir);
}

}  // namespace

std::string RemoteSpecToJson(const RemoteSpec& spec) {
  nlohmann::ordered_json j;
  j["url"] = spec.location.Url();
  j["endpoint"] = spec.location.endpoint;
  j["region"] = spec.location.region;
  j["cache_bytes"] = spec.cache_bytes;
  j["timeout_ms"] = spec.timeout_ms;
  return j.dump(2) + "\n";
}

Result<RemoteSpec> RemoteSpecFromJson(const std::string& name, std::string_view text) {
  auto bad = [&](const std::string& why) { return Status::Corruption("remote " + name + ": remote.json " + why); };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return bad("is not a JSON object");
  for (const char* key : {"url", "endpoint", "region"})
    if (!j.contains(key) || !j[key].is_string()) return bad(std::string("lacks the text field '") + key + "'");
  for (const char* key : {"cache_bytes", "timeout_ms"}) {
    if (!j.contains(key)) return bad(std::string("lacks the number '") + key + "'");
    if (!j[key].is_number_unsigned())
      return bad(std::string("'") + key + "' is " + j[key].dump() + ", not a whole number of 0 or more");
  }
  RemoteSpec spec;
  spec.name = name;
  auto location = S3Location::FromUrl(j["url"].get<std::string>(), j["endpoint"].get<std::string>());
  if (!location.ok()) return bad(location.status().message());
  spec.location = *location;
  spec.location.region = j["region"].get<std::string>();
  if (Status s = spec.location.Validate(); !s.ok()) return bad(s.message());
  spec.cache_bytes = j["cache_bytes"].get<uint64_t>();
  spec.timeout_ms = static_cast<int>(std::min<uint64_t>(j["timeout_ms"].get<uint64_t>(), 3600000));
  return spec;
}

namespace {

Result<std::shared_ptr<S3Client>> Connect(const RemoteSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(S3Credentials credentials, S3Credentials::FromEnvironment());
  S3Options options;
  // A call (one request and its retries) gives up once timeout_ms passed
  // without a byte moving: each attempt may stall for half of it, no retry
  // starts after it, and the last attempt is cut off when it runs out.
  options.request_timeout_ms = std::max(250, spec.timeout_ms / 2);
  options.total_timeout_ms = spec.timeout_ms;
  STRATA_ASSIGN_OR_RETURN(auto client, S3Client::Create(spec.location, std::move(credentials), options));
  return std::shared_ptr<S3Client>(std::move(client));
}

}  // namespace

bool IsValidRemoteName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '-') return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

std::string RemoteDir(const std::string& store_path, const std::string& name) {
  return store_path + "/remotes/" + name;
}

Status AddRemote(Store& local, const RemoteSpec& spec, bool create_bucket, const crypto::Key256* master) {
  if (!IsValidRemoteName(spec.name))
    return Status::InvalidArgument("'" + spec.name + "' is not a valid remote name (letters, digits, '-', '_')");
  // A format 3 store has one key generation, which it cannot share with the
  // stores and remote sides that would seal under the same key.
  if (local.config().encrypted() && !local.config().seal_generations())
    return Status::Unsupported("the store at " + local.path() + " is an encrypted store of format " +
                               std::to_string(local.config().version) +
                               ", made before key generations: it cannot have a remote (export its branches and "
                               "import them into a new encrypted store); nothing was added");
  if (local.config().encrypted() && master == nullptr)
    return Status::InvalidArgument("the store at " + local.path() + " is encrypted: its key is needed to add a remote");
  Env* env = local.env();
  const std::string dir = RemoteDir(local.path(), spec.name);
  if (SpecExists(env, dir)) return Status::AlreadyExists("remote " + spec.name + " exists already");
  if (env->Exists(dir))
    return Status::AlreadyExists(dir + " is left over from an interrupted 'remote add'; remove it and try again");

  STRATA_ASSIGN_OR_RETURN(auto client, Connect(spec));
  if (create_bucket) {
    Status s = client->CreateBucket();
    if (!s.ok() && s.code() != Status::Code::kAlreadyExists) return s;
  }
  // The location's settings win, so every machine writes commits chunked alike.
  STRATA_ASSIGN_OR_RETURN(auto existing, client->Get(kConfigKey));
  if (!existing) {
    // Only an empty location gets a new config.json: packs or refs without
    // one mean it was lost, and settings written now might not be the ones
    // those packs were made with.
    for (const char* folder : {s3::kPacksFolder, s3::kRefsFolder}) {
      STRATA_ASSIGN_OR_RETURN(auto held, client->List(folder));
      if (!held.empty())
        return Status::Corruption(spec.location.Url() + " holds " + std::to_string(held.size()) + " object(s) under " +
                                  folder + " but no " + kConfigKey + ": its settings are lost; not writing new ones");
    }
    const std::string config = local.config().ToJson();
    STRATA_ASSIGN_OR_RETURN(S3PutOutcome outcome, client->PutIf(kConfigKey, config, std::nullopt));
    // Whatever the answer, what is there now decides: ours, another
    // machine's (it was first), or nothing, which is a failure.
    STRATA_ASSIGN_OR_RETURN(existing, client->Get(kConfigKey));
    if (!existing)
      return Status::Unavailable(spec.location.Url() + ": " + kConfigKey + " could not be stored there (" +
                                 (outcome == S3PutOutcome::kUnknown   ? "no clear answer to the write"
                                  : outcome == S3PutOutcome::kWritten ? "the server said it was written, but it is not there"
                                                                      : "the write was refused") +
                                 "); the remote was not added");
  }
  auto config = StoreConfig::FromJson(existing->data);
  if (!config.ok()) return config.status().WithContext(spec.location.Url() + "/" + kConfigKey);
  // Before anything is written to a location that held a store (or after
  // another machine's config landed first): a plain one for an encrypted
  // store, the other way round, or another master key, is refused here.
  STRATA_RETURN_IF_ERROR(CheckRemoteConfig(local.config(), *config, master, spec.location.Url()));
  if (config->encrypted()) STRATA_RETURN_IF_ERROR(ShareSealGenerations(local, *client, *config));
  STRATA_RETURN_IF_ERROR(env->CreateDir(local.path() + "/remotes"));
  STRATA_RETURN_IF_ERROR(env->CreateDir(dir));
  STRATA_RETURN_IF_ERROR(config->encrypted() ? Store::InitWithoutKeys(dir + "/store", *config, env)
                                             : Store::Init(dir + "/store", *config, env));
  if (config->encrypted()) {
    // The remote's local side seals too (the trees and commits a push
    // stores, commits from its workspaces): under generations of its own,
    // claimed from the bucket.
    STRATA_ASSIGN_OR_RETURN(auto side, Store::Open(dir + "/store", Env::Default(), master));
    STRATA_ASSIGN_OR_RETURN(SealRange claimed, ClaimBucketGenerations(*client, kStoreClaim));
    STRATA_RETURN_IF_ERROR(side->AdoptSealGenerations(claimed));
  }
  // remote.json (or remote.sealed) last: until it is there, the remote does not exist.
  return WriteSpec(env, dir, spec, config->encrypted() ? master : nullptr);
}

Status RemoveRemote(const Store& local, const std::string& name) {
  if (!IsValidRemoteName(name)) return Status::InvalidArgument("'" + name + "' is not a valid remote name");
  Env* env = local.env();
  const std::string dir = RemoteDir(local.path(), name);
  if (!env->Exists(dir)) return Status::NotFound("no remote named " + name + " (strata remote list shows them)");
  const std::string workspaces = dir + "/store/workspaces";
  if (env->Exists(workspaces)) {
    STRATA_ASSIGN_OR_RETURN(auto held, env->ListDir(workspaces));
    if (!held.empty())
      return Status::InvalidArgument("remote " + name + " has " + std::to_string(held.size()) +
                                     " workspace(s) here (e.g. '" + held.front() +
                                     "'); end them first (strata --remote " + name + " workspace list)");
  }
  // The settings first: without them the remote no longer exists, whatever a
  // crash leaves of the rest (which a later remove or add then clears).
  for (const std::string& spec : {SpecPath(dir), SealedSpecPath(dir)}) {
    if (!env->Exists(spec)) continue;
    STRATA_RETURN_IF_ERROR(env->RemoveFile(spec));
    STRATA_RETURN_IF_ERROR(env->SyncDir(dir));
  }
  STRATA_RETURN_IF_ERROR(env->RemoveTree(dir));
  return env->SyncDir(local.path() + "/remotes");
}

Result<RemoteSpec> LoadRemote(const std::string& store_path, const std::string& name,
                              const crypto::Key256* master) {
  if (!IsValidRemoteName(name)) return Status::InvalidArgument("'" + name + "' is not a valid remote name");
  Env* env = Env::Default();
  const std::string dir = RemoteDir(store_path, name);
  if (!SpecExists(env, dir)) return Status::NotFound("no remote named " + name + " (add one with 'strata remote add')");
  if (env->Exists(SealedSpecPath(dir))) {
    if (master == nullptr)
      return Status::InvalidArgument("remote " + name + " belongs to an encrypted store: its key is needed to read "
                                     "where it is");
    STRATA_ASSIGN_OR_RETURN(std::string sealed, env->ReadFile(SealedSpecPath(dir)));
    STRATA_ASSIGN_OR_RETURN(RemoteSpec spec, OpenRemoteSpec(*master, name, sealed));
    if (env->Exists(SpecPath(dir))) STRATA_RETURN_IF_ERROR(SealPlainSpec(env, dir, spec, *master));
    return spec;
  }
  STRATA_ASSIGN_OR_RETURN(std::string text, env->ReadFile(SpecPath(dir)));
  STRATA_ASSIGN_OR_RETURN(RemoteSpec spec, RemoteSpecFromJson(name, text));
  if (master != nullptr) {
    if (Status s = SealPlainSpec(env, dir, spec, *master); !s.ok())
      return s.WithContext("remote " + name + ": sealing its plaintext remote.json");
  }
  return spec;
}

Result<std::vector<RemoteSpec>> ListRemotes(const std::string& store_path, const crypto::Key256* master) {
  Env* env = Env::Default();
  std::vector<RemoteSpec> remotes;
  if (!env->Exists(store_path + "/remotes")) return remotes;
  STRATA_ASSIGN_OR_RETURN(auto names, env->ListDir(store_path + "/remotes"));
  for (const std::string& name : names) {
    if (!IsValidRemoteName(name) || !SpecExists(env, RemoteDir(store_path, name))) continue;
    STRATA_ASSIGN_OR_RETURN(RemoteSpec spec, LoadRemote(store_path, name, master));
    remotes.push_back(std::move(spec));
  }
  return remotes;
}

void ClaimSealGenerationsFromRemotes(Store& local, const crypto::Key256* master) {
  if (master == nullptr || !local.config().seal_generations()) return;
  local.SetSealGenerationSource([path = local.path(), key = *master]() -> Result<SealRange> {
    STRATA_ASSIGN_OR_RETURN(std::vector<RemoteSpec> remotes, ListRemotes(path, &key));
    if (remotes.empty()) return Status::NotFound("it has no remote whose bucket could give some");
    std::string failures;
    for (const RemoteSpec& spec : remotes) {
      auto client = Connect(spec);
      auto claimed = client.ok() ? ClaimBucketGenerations(**client, kStoreClaim) : Result<SealRange>(client.status());
      if (claimed.ok()) return claimed;
      failures += (failures.empty() ? "" : "; ") + ("remote " + spec.name + ": " + claimed.status().message());
    }
    return Status::Unavailable(failures);
  });
}

Result<std::unique_ptr<Store>> OpenRemoteStore(const std::string& store_path, const std::string& name,
                                               const crypto::Key256* master) {
  STRATA_ASSIGN_OR_RETURN(RemoteSpec spec, LoadRemote(store_path, name, master));
  STRATA_ASSIGN_OR_RETURN(auto client, Connect(spec));
  const std::string dir = RemoteDir(store_path, name);
  S3Backend* s3 = nullptr;
  auto backend = [&](Env* env, const std::string&, Index* index) -> Result<std::unique_ptr<Backend>> {
    // env is confined to the store; the cache lies beside it.
    STRATA_ASSIGN_OR_RETURN(auto cache, BlockCache::Open(Env::Default(), dir + "/cache", spec.cache_bytes));
    auto made = std::make_unique<S3Backend>(env, client, std::move(cache), index);
    // Called only once the store's key was checked (Store::Open).
    if (master != nullptr) {
      STRATA_ASSIGN_OR_RETURN(std::unique_ptr<StoreCipher> cipher, StoreCipher::FromMasterKey(*master));
      made->SetFooterCipher(std::move(cipher));
    }
    s3 = made.get();
    return std::unique_ptr<Backend>(std::move(made));
  };
  auto store = Store::Open(dir + "/store", Env::Default(), backend, master);
  if (!store.ok()) return store.status().WithContext("remote " + name + " (" + spec.location.Url() + ")");
  // The trees and commits it seals (pushes, its workspaces' commits) may use
  // up its key generations: its bucket gives more.
  if (master != nullptr && (*store)->config().seal_generations())
    (*store)->SetSealGenerationSource([client] { return ClaimBucketGenerations(*client, kStoreClaim); });
  // Opening listed packs/: what the index still names but the bucket lost is
  // forgotten now, so that nothing counts as present that is not.
  if (auto vanished = s3->ForgetVanishedPacks(); !vanished.ok())
    return vanished.status().WithContext("remote " + name + " (" + spec.location.Url() + ")");
  // The commits forget let go of on the remote (in its bucket) are known
  // here as a local store's are, so reads and fsck treat them alike.
  auto forgotten = ReadForgotten(*client);
  if (!forgotten.ok()) return forgotten.status().WithContext("remote " + name + " (" + spec.location.Url() + ")");
  if (!forgotten->empty()) {
    const std::vector<Hash> commits(forgotten->begin(), forgotten->end());
    if (Status s = (*store)->index()->AddForgotten(commits, NowNs()); !s.ok()) return s;
  }
  return store;
}

namespace {

// The backend of a remote's local side opened without the bucket: the
// index's packs are all it knows, and nothing else can be had.
class OfflineBackend : public Backend {
 public:
  OfflineBackend(std::string url, Index* index) : url_(std::move(url)), index_(index) {}
  Status PublishPack(const std::string&, const std::string&) override { return Offline(); }
  Result<std::shared_ptr<RandomAccessFile>> OpenPack(const std::string&) override { return Offline(); }
  Status DeletePack(const std::string&) override { return Offline(); }
  Result<std::vector<std::string>> ListPacks() override {
    STRATA_ASSIGN_OR_RETURN(auto packs, index_->ListPacks());
    std::vector<std::string> names;
    for (auto& [name, size] : packs) names.push_back(name);
    return names;
  }
  Result<std::optional<Hash>> GetRef(const std::string&) override { return Offline(); }
  Result<std::map<std::string, Hash>> ListRefs() override { return Offline(); }
  Status CompareAndSwapRef(const std::string&, const std::optional<Hash>&, const Hash&) override { return Offline(); }
  Status DeleteRef(const std::string&, const Hash&) override { return Offline(); }
  std::string PackLocation(const std::string& name) const override { return url_ + "/" + s3::kPacksFolder + name; }

 private:
  Status Offline() const { return Status::Unavailable(url_ + " is not opened by this command"); }
  const std::string url_;
  Index* const index_;
};

}  // namespace

Result<std::unique_ptr<Store>> OpenRemoteStoreOffline(const std::string& store_path, const std::string& name,
                                                      const crypto::Key256* master) {
  STRATA_ASSIGN_OR_RETURN(RemoteSpec spec, LoadRemote(store_path, name, master));
  auto backend = [&](Env*, const std::string&, Index* index) -> Result<std::unique_ptr<Backend>> {
    return std::unique_ptr<Backend>(std::make_unique<OfflineBackend>(spec.location.Url(), index));
  };
  auto store = Store::Open(RemoteDir(store_path, name) + "/store", Env::Default(), backend, master);
  if (!store.ok()) return store.status().WithContext("remote " + name + " (its local side)");
  return store;
}

std::optional<RemoteBranch> SplitRemoteBranch(const std::string& store_path, const std::string& spec) {
  size_t slash = spec.find('/');
  if (slash == std::string::npos || slash + 1 >= spec.size()) return std::nullopt;
  std::string remote = spec.substr(0, slash);
  if (!IsValidRemoteName(remote) || !SpecExists(Env::Default(), RemoteDir(store_path, remote)))
    return std::nullopt;
  return RemoteBranch{remote, spec.substr(slash + 1)};
}

}  // namespace strata
