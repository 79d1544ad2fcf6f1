// FaultEnv: an Env over another (normally the default) that fails chosen
// operations and can simulate a power cut, to prove crash safety.
//
// Failures: every mutating call (create, append, sync, close, rename, remove,
// directory sync, atomic write) is numbered from 1; FailAt(n, err) makes the
// n-th fail with `err` (EIO, ENOSPC...), and every later one too when
// `sticky` (a dead disk).
//
// Power cut: it remembers, per file written through it, how many bytes were
// synced, and which renames and creations were made durable by a directory
// sync. PowerCut() then does to the real files what a machine losing power
// could have done: unsynced bytes are cut off, files created in a directory
// that was not synced since are deleted, renames not followed by a sync of
// the target's directory are undone. (Whatever bypasses the Env — SQLite —
// is not affected; it keeps its own promises with fsync.)
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "env/env.h"

namespace strata {

class FaultEnv : public Env {
 public:
  explicit FaultEnv(Env* base) : base_(base) {}

  void FailAt(uint64_t n, int err, bool sticky = false);
  uint64_t operations() const;  // mutating calls so far
  // Simulates losing power now; later calls go on normally.
  Status PowerCut();

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    return base_->NewRandomAccessFile(path);
  }
  Result<std::string> ReadFile(const std::string& path) override { return base_->ReadFile(path); }
  Status WriteFileAtomically(const std::string& path, std::string_view data) override;
  bool Exists(const std::string& path) override { return base_->Exists(path); }
  Result<std::vector<std::string>> ListDir(const std::string& path) override { return base_->ListDir(path); }
  Status CreateDir(const std::string& path) override;
  Status RemoveFile(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& path) override;
  Result<uint64_t> FileSize(const std::string& path) override { return base_->FileSize(path); }
  bool ProcessAlive(int pid) override { return base_->ProcessAlive(pid); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode, bool wait) override {
    return base_->LockFile(path, mode, wait);
  }

  // For the files it hands out.
  Status Check(const char* what, const std::string& path);
  void Synced(const std::string& path, uint64_t size);

 private:
  struct PendingRename {
    std::string from, to;
    std::string replaced_content;  // what `to` held before, if anything
    bool replaced = false;
  };

  Env* const base_;
  mutable std::mutex mu_;
  uint64_t ops_ = 0;             // GUARDED_BY(mu_)
  uint64_t fail_at_ = 0;         // GUARDED_BY(mu_)
  int fail_errno_ = 0;           // GUARDED_BY(mu_)
  bool sticky_ = false;          // GUARDED_BY(mu_)
  std::map<std::string, uint64_t> synced_size_;      // files written through us, GUARDED_BY(mu_)
  std::map<std::string, bool> created_undurable_;    // created, directory not synced since, GUARDED_BY(mu_)
  std::vector<PendingRename> renames_;               // not yet made durable, GUARDED_BY(mu_)
};

}  // namespace strata
