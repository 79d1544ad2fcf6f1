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
// A commit releases every file it captured, a hundred thousand of them for a
// new tree: even a rename each is then seconds under the workspace lock.
// ReleaseLater() only notes the name; the thread moves it aside and deletes
// it. A name so noted is not the file's until then, so whoever is about to
// open or create a file under it calls Claim() first, which moves the old one
// aside at once. (The file is garbage from the moment it is released: after a
// crash before the thread got to it, whoever opens the folder's parent
// deletes it, see SqliteWorkspace::Recover.)
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
#include <unordered_set>

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
  // The same, done by this class's thread later (see above).
  void ReleaseLater(const std::string& name);
  // Before a file named `name` is opened or created: moves aside now the file
  // of that name that ReleaseLater noted and the thread has not got to yet.
  void Claim(const std::string& name);
  // Blocks until every file released so far is deleted; whether any was
  // still waiting (a full disk wants that space now).
  bool Drain();
  // Files moved aside and not deleted yet.
  uint64_t pending();

 private:
  void DeleteLoop();
  // A name in the folder that no file of this instance had yet.
  std::string NewName() REQUIRES(mu_);
  // Moves the file aside into the folder as `name`; false when there was no
  // such file, or it could not be moved and was deleted in place.
  bool MoveAside(const std::string& name_there, const std::string& name);

  Directory* const parent_;
  std::unique_ptr<Directory> folder_;  // null: renames are not possible
  Mutex mu_;
  CondVar work_;     // queued or stopping_
  CondVar drained_;  // queue empty and nothing in hand
  std::deque<std::string> queue_ GUARDED_BY(mu_);  // names in folder_
  // Names in the parent noted by ReleaseLater, in order; a name Claim or
  // Release took meanwhile stays in the deque but leaves the set.
  std::deque<std::string> later_ GUARDED_BY(mu_);
  std::unordered_set<std::string> later_names_ GUARDED_BY(mu_);
  bool deleting_ GUARDED_BY(mu_) = false;  // one name taken from queue_
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t next_name_ GUARDED_BY(mu_) = 0;
  std::string name_prefix_;          // tells this instance's names from a former one's
  std::thread thread_;               // last: started once the rest is set up
};

}  // namespace strata::workspace_internal
