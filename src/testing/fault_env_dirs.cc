// FaultEnv's in-place files and directories (fault_env.h says the model):
// their calls are numbered and may fail like every other mutating call, and
// what their syncs made durable is kept so PowerCut() can put it back.
#include <sys/stat.h>

#include <cerrno>

#include "testing/fault_env.h"

namespace strata {
namespace {

// The whole file, read without going through the fault Env.
Result<std::string> ReadAll(const RandomRWFile& file) {
  std::string out;
  char buf[1 << 16];
  for (uint64_t off = 0;;) {
    size_t got = 0;
    STRATA_RETURN_IF_ERROR(file.ReadAt(off, sizeof buf, buf, &got));
    out.append(buf, got);
    if (got < sizeof buf) return out;
    off += got;
  }
}

// The regular files of a directory (what a power cut acts on).
Result<std::set<std::string>> RegularFiles(Directory& dir) {
  STRATA_ASSIGN_OR_RETURN(auto names, dir.List());
  std::set<std::string> out;
  for (const std::string& name : names) {
    auto info = dir.Stat(name);
    if (info.ok() && S_ISREG(info->mode)) out.insert(name);
  }
  return out;
}

class FaultRWFile : public RandomRWFile {
 public:
  FaultRWFile(FaultEnv* env, std::string dir, std::string name, std::unique_ptr<RandomRWFile> base)
      : env_(env), dir_(std::move(dir)), name_(std::move(name)), path_(dir_ + "/" + name_), base_(std::move(base)) {}

  Status ReadAt(uint64_t offset, size_t n, char* out, size_t* got) const override {
    return base_->ReadAt(offset, n, out, got);
  }
  Status WriteAt(uint64_t offset, std::string_view data) override {
    STRATA_RETURN_IF_ERROR(env_->Check("write to ", path_));
    return base_->WriteAt(offset, data);
  }
  Status Truncate(uint64_t size) override {
    STRATA_RETURN_IF_ERROR(env_->Check("truncation of ", path_));
    return base_->Truncate(size);
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    STRATA_RETURN_IF_ERROR(env_->Check("allocation in ", path_));
    return base_->Allocate(offset, length);
  }
  Status PunchHole(uint64_t offset, uint64_t length) override {
    STRATA_RETURN_IF_ERROR(env_->Check("punching ", path_));
    return base_->PunchHole(offset, length);
  }
  Status Sync() override {
    STRATA_RETURN_IF_ERROR(env_->Check("sync of ", path_));
    return env_->SyncInPlace(dir_, name_, *base_);
  }
  Result<FileInfo> Stat() const override { return base_->Stat(); }
  Result<std::optional<uint64_t>> NextData(uint64_t offset) const override { return base_->NextData(offset); }
  Result<uint64_t> NextHole(uint64_t offset) const override { return base_->NextHole(offset); }

 private:
  FaultEnv* const env_;
  const std::string dir_, name_, path_;
  const std::unique_ptr<RandomRWFile> base_;
};

class FaultDirectory : public Directory {
 public:
  FaultDirectory(FaultEnv* env, std::unique_ptr<Directory> base) : env_(env), base_(std::move(base)) {}

  const std::string& path() const override { return base_->path(); }
  Result<std::unique_ptr<RandomRWFile>> OpenFile(const std::string& name, bool create) override {
    if (create) STRATA_RETURN_IF_ERROR(env_->Check("creating ", path() + "/" + name));
    STRATA_ASSIGN_OR_RETURN(auto file, base_->OpenFile(name, create));
    STRATA_RETURN_IF_ERROR(env_->Touched(path(), name, file.get()));
    return std::unique_ptr<RandomRWFile>(new FaultRWFile(env_, path(), name, std::move(file)));
  }
  Result<FileInfo> Stat(const std::string& name) override { return base_->Stat(name); }
  Result<std::vector<std::string>> List() override { return base_->List(); }
  Status Sync() override {
    STRATA_RETURN_IF_ERROR(env_->Check("sync of directory ", path()));
    return env_->SyncTrackedDir(*base_);
  }
  Result<std::unique_ptr<Directory>> OpenSubdirectory(const std::string& name, bool create) override {
    if (create) STRATA_RETURN_IF_ERROR(env_->Check("creating directory ", path() + "/" + name));
    STRATA_ASSIGN_OR_RETURN(auto dir, base_->OpenSubdirectory(name, create));
    return env_->Track(std::move(dir));
  }
  Status MoveTo(const std::string& name, Directory& to, const std::string& to_name) override {
    STRATA_RETURN_IF_ERROR(env_->Check("moving ", path() + "/" + name));
    STRATA_RETURN_IF_ERROR(base_->MoveTo(name, *static_cast<FaultDirectory&>(to).base_, to_name));
    env_->RemovedFrom(path(), name);
    STRATA_RETURN_IF_ERROR(env_->Touched(to.path(), to_name, nullptr));
    return Status::Ok();
  }
  Status Remove(const std::string& name) override {
    STRATA_RETURN_IF_ERROR(env_->Check("removing ", path() + "/" + name));
    STRATA_RETURN_IF_ERROR(base_->Remove(name));
    env_->RemovedFrom(path(), name);
    return Status::Ok();
  }

 private:
  FaultEnv* const env_;
  const std::unique_ptr<Directory> base_;
};

}  // namespace

Result<std::unique_ptr<Directory>> FaultEnv::OpenDirectory(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(auto dir, base_->OpenDirectory(path));
  return Track(std::move(dir));
}

Result<std::unique_ptr<Directory>> FaultEnv::Track(std::unique_ptr<Directory> base) {
  std::lock_guard<std::mutex> lock(mu_);
  if (dirs_.count(base->path()) == 0) {
    // First seen: what is there now counts as durable.
    // (Their bytes are kept when they are first used, Touched.)
    InPlaceDir model;
    STRATA_ASSIGN_OR_RETURN(model.durable_names, RegularFiles(*base));
    dirs_[base->path()] = std::move(model);
  }
  return std::unique_ptr<Directory>(new FaultDirectory(this, std::move(base)));
}

Status FaultEnv::SyncInPlace(const std::string& dir, const std::string& name, RandomRWFile& file) {
  // Under the lock, one at a time: what a sync makes durable is what the
  // file held when it began, and a removal reported meanwhile applies after.
  std::lock_guard<std::mutex> lock(mu_);
  if (PowerOffLocked()) return Status::IOError("power cut: sync of " + dir + "/" + name, EIO);
  STRATA_ASSIGN_OR_RETURN(std::string bytes, ReadAll(file));
  STRATA_RETURN_IF_ERROR(file.Sync());
  if (auto it = dirs_.find(dir); it != dirs_.end()) it->second.synced[name] = std::move(bytes);
  seen_.file_syncs++;
  return Status::Ok();
}

Status FaultEnv::SyncTrackedDir(Directory& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  if (PowerOffLocked()) return Status::IOError("power cut: sync of " + dir.path(), EIO);
  STRATA_ASSIGN_OR_RETURN(auto names, RegularFiles(dir));
  STRATA_RETURN_IF_ERROR(dir.Sync());
  if (auto it = dirs_.find(dir.path()); it != dirs_.end()) it->second.durable_names = std::move(names);
  seen_.dir_syncs++;
  return Status::Ok();
}

Status FaultEnv::Touched(const std::string& dir, const std::string& name, const RandomRWFile* file) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end() || !it->second.touched.insert(name).second) return Status::Ok();
  // A durable file first used now: what it holds is what a cut goes back to.
  if (file != nullptr && it->second.durable_names.count(name) != 0) {
    STRATA_ASSIGN_OR_RETURN(std::string bytes, ReadAll(*file));
    it->second.synced[name] = std::move(bytes);
  }
  return Status::Ok();
}

void FaultEnv::RemovedFrom(const std::string& dir, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (PowerOffLocked()) return;  // the process runs on, the disk no longer follows
  if (auto it = dirs_.find(dir); it != dirs_.end()) {
    it->second.touched.insert(name);
    it->second.durable_names.erase(name);
    it->second.synced.erase(name);  // a file created under the same name later is another file
  }
  seen_.removals++;
}

Status FaultEnv::RestoreInPlace(const std::string& path, const InPlaceDir& model) {
  auto opened = base_->OpenDirectory(path);
  if (!opened.ok() && opened.status().IsNotFound()) return Status::Ok();  // removed since, durably
  STRATA_RETURN_IF_ERROR(opened.status());
  Directory& dir = **opened;
  STRATA_ASSIGN_OR_RETURN(auto present, RegularFiles(dir));
  for (const std::string& name : present)
    if (model.touched.count(name) != 0 && model.durable_names.count(name) == 0) STRATA_RETURN_IF_ERROR(dir.Remove(name));
  for (const std::string& name : model.durable_names) {
    if (model.touched.count(name) == 0) continue;  // never used through the Env: as it is
    STRATA_ASSIGN_OR_RETURN(auto file, dir.OpenFile(name, true));
    STRATA_RETURN_IF_ERROR(file->Truncate(0));
    auto it = model.synced.find(name);
    if (it != model.synced.end()) STRATA_RETURN_IF_ERROR(file->WriteAt(0, it->second));
  }
  return Status::Ok();
}

Status FaultEnv::RestoreInPlaceLocked() {
  for (const auto& [path, dir] : dirs_) STRATA_RETURN_IF_ERROR(RestoreInPlace(path, dir));
  dirs_.clear();
  unplugged_ = false;
  return Status::Ok();
}

Status FaultEnv::RestoreInPlaceFiles() {
  std::lock_guard<std::mutex> lock(mu_);
  return RestoreInPlaceLocked();
}

Status FaultEnv::SyncFile(const std::string& path) {
  STRATA_RETURN_IF_ERROR(Check("sync of ", path));
  std::function<void(const std::string&)> synced;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (PowerOffLocked()) return Status::IOError("power cut: sync of " + path, EIO);
    synced = on_synced_;
  }
  STRATA_RETURN_IF_ERROR(base_->SyncFile(path));
  if (synced) synced(path);
  return Status::Ok();
}

Result<uint64_t> FaultEnv::FreeSpace(const std::string& path) {
  std::function<uint64_t(const std::string&)> free;
  {
    std::lock_guard<std::mutex> lock(mu_);
    free = free_space_;
  }
  if (free) return free(path);
  return base_->FreeSpace(path);
}

bool FaultEnv::PowerOffLocked() {
  if (!unplugged_ && is_cut_ && is_cut_()) unplugged_ = true;
  return unplugged_;
}

void FaultEnv::Unplug() {
  std::lock_guard<std::mutex> lock(mu_);
  unplugged_ = true;
}

bool FaultEnv::unplugged() {
  std::lock_guard<std::mutex> lock(mu_);
  return PowerOffLocked();
}

void FaultEnv::FollowPower(std::function<bool()> is_cut, std::function<void(const std::string& path)> synced) {
  std::lock_guard<std::mutex> lock(mu_);
  is_cut_ = std::move(is_cut);
  on_synced_ = std::move(synced);
}

void FaultEnv::SetFreeSpace(std::function<uint64_t(const std::string& path)> free) {
  std::lock_guard<std::mutex> lock(mu_);
  free_space_ = std::move(free);
}

FaultEnv::Seen FaultEnv::seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

}  // namespace strata
