// GatedEnv: the default Env with a gate on pack reads, for tests of the read
// path. While the gate is closed, every read of a file the store opened for
// random access blocks; the test can count reads and see how many wait, so
// it can make fetches overlap for certain instead of hoping they do.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>

#include "env/env.h"

namespace strata::testing {

class GatedEnv : public Env {
 public:
  void Close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int reads() {
    std::lock_guard lock(mu_);
    return reads_;
  }
  int blocked() {
    std::lock_guard lock(mu_);
    return blocked_;
  }
  void ResetReads() {
    std::lock_guard lock(mu_);
    reads_ = 0;
  }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return base_->NewWritableFile(path);
  }
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    STRATA_ASSIGN_OR_RETURN(auto file, base_->NewRandomAccessFile(path));
    return std::unique_ptr<RandomAccessFile>(new GatedFile(this, std::move(file)));
  }
  Result<std::string> ReadFile(const std::string& path) override { return base_->ReadFile(path); }
  Status WriteFileAtomically(const std::string& path, std::string_view data) override {
    return base_->WriteFileAtomically(path, data);
  }
  bool Exists(const std::string& path) override { return base_->Exists(path); }
  Result<std::vector<std::string>> ListDir(const std::string& path) override { return base_->ListDir(path); }
  Status CreateDir(const std::string& path) override { return base_->CreateDir(path); }
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }
  Status Rename(const std::string& from, const std::string& to) override { return base_->Rename(from, to); }
  Status RenameNoReplace(const std::string& from, const std::string& to) override {
    return base_->RenameNoReplace(from, to);
  }
  Status RemoveTree(const std::string& path) override { return base_->RemoveTree(path); }
  Status SyncDir(const std::string& path) override { return base_->SyncDir(path); }
  Result<uint64_t> FileSize(const std::string& path) override { return base_->FileSize(path); }
  bool ProcessAlive(int pid) override { return base_->ProcessAlive(pid); }
  Result<std::string> BootId() override { return base_->BootId(); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode, bool wait) override {
    return base_->LockFile(path, mode, wait);
  }
  Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& path) override {
    return base_->OpenDirectory(path);
  }
  Status SyncFile(const std::string& path) override { return base_->SyncFile(path); }
  Result<uint64_t> FreeSpace(const std::string& path) override { return base_->FreeSpace(path); }

 private:
  class GatedFile : public RandomAccessFile {
   public:
    GatedFile(GatedEnv* env, std::unique_ptr<RandomAccessFile> file) : env_(env), file_(std::move(file)) {}
    Status Read(uint64_t offset, size_t n, std::string* out) const override {
      env_->Pass();
      return file_->Read(offset, n, out);
    }
    uint64_t Size() const override { return file_->Size(); }

   private:
    GatedEnv* env_;
    std::unique_ptr<RandomAccessFile> file_;
  };

  void Pass() {
    std::unique_lock lock(mu_);
    reads_++;
    blocked_++;
    cv_.wait(lock, [this] { return open_; });
    blocked_--;
  }

  Env* const base_ = Env::Default();
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;  // GUARDED_BY(mu_)
  int reads_ = 0;     // GUARDED_BY(mu_)
  int blocked_ = 0;   // GUARDED_BY(mu_)
};

}  // namespace strata::testing
