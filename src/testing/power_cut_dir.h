// Test-only: power loss for a directory of plain files, as the workspace
// keeps its data files (data/<ino>): written in place (pwrite, ftruncate,
// fallocate), made durable by fdatasync or fsync of each file, and the
// directory fsynced after files were created in it.
//
// The test reports every sync and every removal the code under test makes
// there (it wraps the C library's calls); RestoreToLastSync() then puts the
// directory back as the disk would hold it after a power cut:
//  - a file holds what it held when its last sync began: every write,
//    truncation or punched hole since is lost, all of them (no torn writes,
//    no unsynced write that partly survives);
//  - a file exists only if it was there at the last fsync of the directory:
//    one created since is gone, even if it was synced itself; one whose name
//    is durable but whose bytes were never synced is empty;
//  - a removal (renamed out of the directory, or unlinked) is durable at
//    once: of the two outcomes a power cut allows, the one where a file
//    removed too early is lost (a removal undone only leaves a file that
//    nothing refers to);
//  - files in its subdirectories, and renames into the directory, are
//    neither tracked nor restored.
// Files present when the object is made are taken as durable as they are.
// Thread-safe; the syncs it is given run under its lock, one at a time.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace strata::testing {

class PowerCutDir {
 public:
  explicit PowerCutDir(const std::string& dir);

  // Whether `path` (canonical) is the directory or a file directly in it.
  bool Covers(const std::string& path) const;
  // The code under test syncs `fd`, open on `path` (covered), by `sync`;
  // returns what `sync` returns, and keeps what the sync made durable.
  int Sync(int fd, const std::string& path, const std::function<int()>& sync);
  // The code under test removed the file at `path` (covered), before the cut.
  void Removed(const std::string& path);
  // What it was told of, before the cut: so a test can tell that its
  // workload reaches the model at all.
  struct Seen {
    int file_syncs = 0;
    int dir_syncs = 0;
    int removals = 0;
  };
  Seen seen();
  // Puts every file directly in the directory back as it was at its last
  // sync, or removes it. REQUIRES: nobody writes there any more.
  void RestoreToLastSync();

 private:
  std::set<std::string> ListFiles() const;

  const std::string dir_;  // canonical
  std::mutex mu_;
  std::set<std::string> durable_names_;        // GUARDED_BY(mu_)
  std::map<std::string, std::string> synced_;  // name -> bytes at its last sync, GUARDED_BY(mu_)
  Seen seen_;                                  // GUARDED_BY(mu_)
};

}  // namespace strata::testing
