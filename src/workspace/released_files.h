// ReleasedFiles: data files nobody refers to any more, deleted off the
// workspace lock.
//
// Deleting a file whose blocks are allocated costs a few hundred microseconds
// on ext4 (its blocks are freed, and discarded where the disk wants that), and
// data files are released by the thousand under the workspace lock: every file
// a commit captured, every file of an rm -rf. Release() only renames the file
// into a folder of its own (no blocks move: tens of microseconds), and a
// thread of this class deletes it from there. The file cannot stay where it
// is and go later, because its inode may live on and write a new data file
// under the same name.
//
// Whatever a crash left in the folder is deleted by the next instance on it,
// which starts by listing it; the destructor deletes what is still queued, so
// the space is back when the daemon is gone.
//
// The folder is opened once, refusing a symlink, and every name in it is
// reached through that handle (env.h: Directory): a store whose
// data/released/ was replaced by a link elsewhere never makes the daemon
// delete files outside the store.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "env/env.h"
#include "util/mutex.h"

namespace strata::workspace_internal {

class ReleasedFiles {
 public:
  // The folder `name` inside `parent` (the directory of the files to be
  // released; it must outlive this), created if missing, on the same
  // filesystem as the files. With a null parent, or a folder that cannot be
  // made, Release deletes in place.
  ReleasedFiles(Directory* parent, const std::string& name);
  ~ReleasedFiles();
  ReleasedFiles(const ReleasedFiles&) = delete;
  ReleasedFiles& operator=(const ReleasedFiles&) = delete;

  // Moves the file `name` of the parent directory out of the way and queues
  // it for deletion; a missing file is fine. Where it cannot be moved, it is
  // deleted in place.
  void Release(const std::string& name);
  // Blocks until every file released so far is deleted; whether any was
  // still waiting (a full disk wants that space now).
  bool Drain();
  // Files moved aside and not deleted yet.
  uint64_t pending();

 private:
  void DeleteLoop();

  Directory* const parent_;
  std::unique_ptr<Directory> folder_;  // null: renames are not possible
  Mutex mu_;
  CondVar work_;     // queued or stopping_
  CondVar drained_;  // queue empty and nothing in hand
  std::deque<std::string> queue_ GUARDED_BY(mu_);  // names in dir_
  bool deleting_ GUARDED_BY(mu_) = false;  // one name taken from queue_
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t next_name_ GUARDED_BY(mu_) = 0;
  std::string name_prefix_;          // tells this instance's names from a former one's
  std::thread thread_;               // last: started once the rest is set up
};

}  // namespace strata::workspace_internal
