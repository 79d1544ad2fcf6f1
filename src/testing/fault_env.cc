#include "testing/fault_env.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace strata {
namespace {

std::string Parent(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

class FaultWritableFile : public WritableFile {
 public:
  FaultWritableFile(FaultEnv* env, std::string path, std::unique_ptr<WritableFile> base)
      : env_(env), path_(std::move(path)), base_(std::move(base)) {}
  Status Append(std::string_view data) override {
    STRATA_RETURN_IF_ERROR(env_->Check("append to ", path_));
    return base_->Append(data);
  }
  Status Sync() override {
    STRATA_RETURN_IF_ERROR(env_->Check("sync of ", path_));
    if (env_->unplugged()) return Status::IOError("power cut: sync of " + path_, EIO);
    STRATA_RETURN_IF_ERROR(base_->Sync());
    env_->Synced(path_, base_->Size());
    return Status::Ok();
  }
  Status Close() override { return base_->Close(); }
  uint64_t Size() const override { return base_->Size(); }

 private:
  FaultEnv* const env_;
  const std::string path_;
  std::unique_ptr<WritableFile> base_;
};

}  // namespace

void FaultEnv::FailAt(uint64_t n, int err, bool sticky) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_at_ = n;
  fail_errno_ = err;
  sticky_ = sticky;
}

uint64_t FaultEnv::operations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_;
}

Status FaultEnv::Check(const char* what, const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  ops_++;
  if (fail_at_ != 0 && (ops_ == fail_at_ || (sticky_ && ops_ > fail_at_)))
    return Status::IOError(std::string("injected failure: ") + what + path, fail_errno_);
  return Status::Ok();
}

void FaultEnv::Synced(const std::string& path, uint64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  synced_size_[path] = size;
}

Result<std::unique_ptr<WritableFile>> FaultEnv::NewWritableFile(const std::string& path) {
  STRATA_RETURN_IF_ERROR(Check("creating ", path));
  STRATA_ASSIGN_OR_RETURN(auto file, base_->NewWritableFile(path));
  {
    std::lock_guard<std::mutex> lock(mu_);
    synced_size_[path] = 0;
    created_undurable_[path] = true;
  }
  return std::unique_ptr<WritableFile>(new FaultWritableFile(this, path, std::move(file)));
}

Status FaultEnv::WriteFileAtomically(const std::string& path, std::string_view data) {
  STRATA_RETURN_IF_ERROR(Check("writing ", path));
  return base_->WriteFileAtomically(path, data);  // durable when it returns
}

Status FaultEnv::CreateDir(const std::string& path) {
  STRATA_RETURN_IF_ERROR(Check("creating directory ", path));
  return base_->CreateDir(path);
}

Status FaultEnv::RemoveFile(const std::string& path) {
  STRATA_RETURN_IF_ERROR(Check("removing ", path));
  STRATA_RETURN_IF_ERROR(base_->RemoveFile(path));
  std::lock_guard<std::mutex> lock(mu_);
  synced_size_.erase(path);
  created_undurable_.erase(path);
  return Status::Ok();
}

Status FaultEnv::Rename(const std::string& from, const std::string& to) {
  STRATA_RETURN_IF_ERROR(Check("renaming ", from));
  PendingRename r{from, to, "", false};
  if (base_->Exists(to)) {
    auto old = base_->ReadFile(to);
    if (!old.ok()) return old.status();
    r.replaced_content = std::move(old).value();
    r.replaced = true;
  }
  STRATA_RETURN_IF_ERROR(base_->Rename(from, to));
  std::lock_guard<std::mutex> lock(mu_);
  renames_.push_back(std::move(r));
  if (auto it = synced_size_.find(from); it != synced_size_.end()) {
    synced_size_[to] = it->second;
    synced_size_.erase(it);
  }
  if (created_undurable_.erase(from)) created_undurable_[to] = true;
  return Status::Ok();
}

Status FaultEnv::RenameNoReplace(const std::string& from, const std::string& to) {
  STRATA_RETURN_IF_ERROR(Check("renaming ", from));
  return base_->RenameNoReplace(from, to);
}

Status FaultEnv::RemoveTree(const std::string& path) {
  STRATA_RETURN_IF_ERROR(Check("removing ", path));
  return base_->RemoveTree(path);
}

void FaultEnv::FailQueries(int err) {
  std::lock_guard<std::mutex> lock(mu_);
  query_errno_ = err;
}

Result<std::vector<std::string>> FaultEnv::ListDir(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (query_errno_ != 0) return Status::IOError("injected failure: listing " + path, query_errno_);
  }
  return base_->ListDir(path);
}

Result<std::string> FaultEnv::BootId() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (query_errno_ != 0) return Status::IOError("injected failure: reading the boot id", query_errno_);
    if (!boot_id_.empty()) return boot_id_;
  }
  return base_->BootId();
}

void FaultEnv::SetBootId(std::string id) {
  std::lock_guard<std::mutex> lock(mu_);
  boot_id_ = std::move(id);
}

Status FaultEnv::SyncDir(const std::string& path) {
  STRATA_RETURN_IF_ERROR(Check("sync of directory ", path));
  if (unplugged()) return Status::IOError("power cut: sync of directory " + path, EIO);
  STRATA_RETURN_IF_ERROR(base_->SyncDir(path));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = created_undurable_.begin(); it != created_undurable_.end();)
    it = Parent(it->first) == path ? created_undurable_.erase(it) : std::next(it);
  renames_.erase(std::remove_if(renames_.begin(), renames_.end(),
                                [&](const PendingRename& r) { return Parent(r.to) == path; }),
                 renames_.end());
  return Status::Ok();
}

Status FaultEnv::PowerCut() {
  std::lock_guard<std::mutex> lock(mu_);
  STRATA_RETURN_IF_ERROR(RestoreInPlaceLocked());
  // Newest first: each undo sees the state its rename left.
  for (auto r = renames_.rbegin(); r != renames_.rend(); ++r) {
    if (::rename(r->to.c_str(), r->from.c_str()) != 0 && errno != ENOENT)
      return Status::IOError("power cut: undoing rename of " + r->from, errno);
    if (r->replaced) STRATA_RETURN_IF_ERROR(base_->WriteFileAtomically(r->to, r->replaced_content));
    if (auto it = synced_size_.find(r->to); it != synced_size_.end()) {
      synced_size_[r->from] = it->second;
      synced_size_.erase(it);
    }
    if (created_undurable_.erase(r->to)) created_undurable_[r->from] = true;
  }
  renames_.clear();
  for (const auto& [path, unused] : created_undurable_) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::IOError("power cut: removing " + path, errno);
    synced_size_.erase(path);
  }
  created_undurable_.clear();
  for (const auto& [path, size] : synced_size_) {
    if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0 && errno != ENOENT)
      return Status::IOError("power cut: truncating " + path, errno);
  }
  synced_size_.clear();
  return Status::Ok();
}

}  // namespace strata
