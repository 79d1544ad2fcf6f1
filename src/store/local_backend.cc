// LocalBackend: a store in a local directory. A pack is published by renaming
// its synced temp file into packs/ and syncing that directory; refs live in
// the SQLite index, whose transactions give the compare-and-swap.
#include "store/backend.h"
#include "store/index.h"
#include "store/pack_format.h"

namespace strata {
namespace {

class LocalBackend : public Backend {
 public:
  LocalBackend(Env* env, std::string packs_dir, Index* index)
      : env_(env), packs_dir_(std::move(packs_dir)), index_(index) {}

  Status PublishPack(const std::string& local_path, const std::string& name) override {
    STRATA_RETURN_IF_ERROR(env_->Rename(local_path, packs_dir_ + "/" + name));
    return env_->SyncDir(packs_dir_);
  }

  Result<std::shared_ptr<RandomAccessFile>> OpenPack(const std::string& name) override {
    STRATA_ASSIGN_OR_RETURN(auto file, env_->NewRandomAccessFile(packs_dir_ + "/" + name));
    return std::shared_ptr<RandomAccessFile>(std::move(file));
  }

  Status DeletePack(const std::string& name) override {
    STRATA_RETURN_IF_ERROR(env_->RemoveFile(packs_dir_ + "/" + name));
    return env_->SyncDir(packs_dir_);
  }

  Status DeletePackGroup(const std::vector<std::string>& names) override {
    if (names.empty()) return Status::Ok();
    for (const std::string& name : names) STRATA_RETURN_IF_ERROR(env_->RemoveFile(packs_dir_ + "/" + name));
    return env_->SyncDir(packs_dir_);
  }

  Result<std::vector<std::string>> ListPacks() override {
    STRATA_ASSIGN_OR_RETURN(auto files, env_->ListDir(packs_dir_));
    std::vector<std::string> packs;
    for (std::string& f : files)
      if (PackNameToHash(f)) packs.push_back(std::move(f));
    return packs;
  }

  Result<std::optional<Hash>> GetRef(const std::string& name) override { return index_->GetRef(name); }
  Result<std::map<std::string, Hash>> ListRefs() override { return index_->ListRefs(); }
  Status CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected,
                           const Hash& target) override {
    return index_->CompareAndSwapRef(name, expected, target);
  }
  Status DeleteRef(const std::string& name, const Hash& expected) override {
    return index_->DeleteRef(name, expected);
  }

  std::string PackLocation(const std::string& name) const override { return packs_dir_ + "/" + name; }
  bool LocalDisk() const override { return true; }
  bool RefsInIndex() const override { return true; }

 private:
  Env* const env_;
  const std::string packs_dir_;
  Index* const index_;
};

}  // namespace

std::unique_ptr<Backend> NewLocalBackend(Env* env, const std::string& store_path, Index* index) {
  return std::make_unique<LocalBackend>(env, store_path + "/packs", index);
}

}  // namespace strata
