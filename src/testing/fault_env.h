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
// Files changed in place (RandomRWFile, in a Directory opened through it, as
// the workspace keeps its data files) lose at the cut what a disk may lose
// (fault_env_dirs.cc), the model of LevelDB's fault-injection Env:
//  - a file holds what it held when its last sync began: every write,
//    truncation, allocation or punched hole since is lost, all of them (no
//    torn writes, no unsynced write that partly survives);
//  - a file exists only if it was there at the last sync of its directory:
//    one created (or moved in) since is gone, even if it was synced itself;
//    one whose name is durable but whose bytes were never synced is empty;
//  - a removal (Remove, or a move out of the directory) is durable at once:
//    of the two outcomes a power cut allows, the one that loses a file
//    removed too early;
//  - files present when the directory was first opened through this Env are
//    taken as durable as they are;
//  - only names used through the Env (opened, moved in, removed) are put
//    back: the directory's other files (a database beside the data files)
//    are left as they are, whatever keeps their promises.
// Unplug() turns the power off without restoring anything yet: the process
// runs on, but from then every sync fails (EIO) and nothing more becomes
// durable, as in the moments after a real cut; PowerCut() then puts the
// files back. FollowPower() ties this to another model's cut (the SQLite VFS
// of sqlite_test_vfs.h), so both lose power at the same moment.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "env/env.h"

namespace strata {

class FaultEnv : public Env {
 public:
  explicit FaultEnv(Env* base) : base_(base) {}

  void FailAt(uint64_t n, int err, bool sticky = false);
  // The calls that only ask the OS (ListDir, BootId) fail with err from now
  // on; 0 lets them through again. They are not numbered with the others.
  void FailQueries(int err);
  uint64_t operations() const;  // mutating calls so far
  // Simulates losing power now (restores what a cut leaves of every file
  // it tracks); later calls go on normally, and directories opened after it
  // start their model afresh. REQUIRES: no file it tracks is in use.
  Status PowerCut();
  // The in-place part of PowerCut() alone, for a test whose other files are
  // another model's (or left as they are). REQUIRES: no file it tracks is in use.
  Status RestoreInPlaceFiles();
  // The power is off from now on (see above); PowerCut() then restores.
  void Unplug();
  bool unplugged();
  // Another model's cut: `is_cut` is asked before every sync and removal,
  // and once it says yes the power is off (Unplug). `synced` hears of every
  // SyncFile that succeeded while the power was on (an fdatasync of a file
  // the other model keeps, the WAL of a database).
  void FollowPower(std::function<bool()> is_cut, std::function<void(const std::string& path)> synced);
  // Replaces BootId's answer (the machine restarted, for whoever asks from
  // now on); "": the real one.
  void SetBootId(std::string id);
  // Replaces FreeSpace's answer (a disk that looks full); null: the real one.
  void SetFreeSpace(std::function<uint64_t(const std::string& path)> free);
  // What the in-place model was told, so a test can tell its workload reaches it.
  struct Seen {
    int file_syncs = 0;
    int dir_syncs = 0;
    int removals = 0;
  };
  Seen seen() const;

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    return base_->NewRandomAccessFile(path);
  }
  Result<std::string> ReadFile(const std::string& path) override { return base_->ReadFile(path); }
  Status WriteFileAtomically(const std::string& path, std::string_view data) override;
  bool Exists(const std::string& path) override { return base_->Exists(path); }
  Result<std::vector<std::string>> ListDir(const std::string& path) override;
  Status CreateDir(const std::string& path) override;
  Status RemoveFile(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  // Numbered and failed as the other mutating calls; outside the power-cut
  // model (the workspace creates and removes whole directories with them,
  // syncing the directory that holds them).
  Status RenameNoReplace(const std::string& from, const std::string& to) override;
  Status RemoveTree(const std::string& path) override;
  Status SyncDir(const std::string& path) override;
  Result<uint64_t> FileSize(const std::string& path) override { return base_->FileSize(path); }
  bool ProcessAlive(int pid) override { return base_->ProcessAlive(pid); }
  Result<std::string> BootId() override;
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockMode mode, bool wait) override {
    return base_->LockFile(path, mode, wait);
  }
  Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& path) override;
  Status SyncFile(const std::string& path) override;
  Result<uint64_t> FreeSpace(const std::string& path) override;

  // For the files and directories it hands out.
  Status Check(const char* what, const std::string& path);
  void Synced(const std::string& path, uint64_t size);
  // Whether the power is off (asking FollowPower's is_cut); REQUIRES: mu_ held.
  bool PowerOffLocked();
  // The in-place model (fault_env_dirs.cc).
  Result<std::unique_ptr<Directory>> Track(std::unique_ptr<Directory> base);
  Status SyncInPlace(const std::string& dir, const std::string& name, RandomRWFile& file);
  Status SyncTrackedDir(Directory& dir);
  void RemovedFrom(const std::string& dir, const std::string& name);
  // name in dir is used through the Env from now on; `file`, when given, is
  // it open (to keep what a durable file held before its first change).
  Status Touched(const std::string& dir, const std::string& name, const RandomRWFile* file);

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
  int query_errno_ = 0;          // GUARDED_BY(mu_)
  bool sticky_ = false;          // GUARDED_BY(mu_)
  std::map<std::string, uint64_t> synced_size_;      // files written through us, GUARDED_BY(mu_)
  std::map<std::string, bool> created_undurable_;    // created, directory not synced since, GUARDED_BY(mu_)
  std::vector<PendingRename> renames_;               // not yet made durable, GUARDED_BY(mu_)

  // A directory of in-place files: the names durable at its last sync, and
  // each file's bytes at its last sync.
  struct InPlaceDir {
    std::set<std::string> durable_names;
    std::map<std::string, std::string> synced;
    std::set<std::string> touched;  // the names restored at the cut
  };
  Status RestoreInPlace(const std::string& path, const InPlaceDir& dir);  // REQUIRES: mu_ held
  Status RestoreInPlaceLocked();  // every directory, then starts afresh; REQUIRES: mu_ held
  std::map<std::string, InPlaceDir> dirs_;  // by path, GUARDED_BY(mu_)
  bool unplugged_ = false;                  // GUARDED_BY(mu_)
  std::function<bool()> is_cut_;            // GUARDED_BY(mu_)
  std::function<void(const std::string&)> on_synced_;  // GUARDED_BY(mu_)
  std::function<uint64_t(const std::string&)> free_space_;  // GUARDED_BY(mu_)
  std::string boot_id_;                     // "": the base's, GUARDED_BY(mu_)
  Seen seen_;                               // GUARDED_BY(mu_)
};

}  // namespace strata
