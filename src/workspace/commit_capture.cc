// Capture, step 2 of a commit (commit_ops.cc): each file of the cut is
// re-chunked around its written ranges (rechunk.h) and its new chunks are
// stored.
//
// Reading, hashing and compressing one file is independent of every other,
// so a few threads capture side by side (CaptureThreads). What stays the
// same as with one thread: a file's chunk list depends only on its bytes at
// the cut, so every tree, and the root tree a commit names, is the same
// whichever thread captured which file; only the order of the objects in the
// packs varies. The store takes Puts from many threads (store.h), and compresses
// and seals outside its lock.
//
// Threads pick files under mu_: first those a writer waits for (wanted_), then
// any other not yet claimed. A file stays in capturing_ until its capture
// ends, so its writers keep waiting until then. The first error stops every
// thread after the file it is on; the commit then fails with that error.
#include <algorithm>
#include <atomic>
#include <thread>

#include "util/thread_pool.h"
#include "workspace/commit_plan.h"

namespace strata::workspace_internal {

// What the capture threads of one commit share.
struct SqliteWorkspace::CaptureRun {
  CommitPlan& plan;
  CommitProgress* progress;
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> files{0}, bytes_hashed{0}, objects_written{0};
  Mutex mu;
  Status error GUARDED_BY(mu);  // the first one
};

namespace {

size_t CaptureThreads(size_t requested, size_t files) {
  // Hashing and compressing are CPU work: one thread per core. Two at least:
  // a file read from a cold disk waits, and the other thread works meanwhile.
  const size_t by_machine = std::clamp<size_t>(std::thread::hardware_concurrency(), 2, 8);
  return std::max<size_t>(1, std::min(requested != 0 ? requested : by_machine, files));
}

}  // namespace

void SqliteWorkspace::WaitForCapture(InodeId ino) {
  if (capturing_.count(ino) == 0) return;
  wanted_.insert(ino);  // captured next, so this writer waits for its file only
  while (capturing_.count(ino) != 0) capture_cv_.Wait(&mu_);
}

InodeId SqliteWorkspace::ClaimCapture() {
  auto unclaimed = [this](InodeId i) REQUIRES(mu_) { return capture_claimed_.count(i) == 0; };
  auto wanted = std::find_if(wanted_.begin(), wanted_.end(),
                             [&](InodeId i) REQUIRES(mu_) { return capturing_.count(i) && unclaimed(i); });
  InodeId ino = 0;
  if (wanted != wanted_.end()) {
    ino = *wanted;
  } else {
    // Skips at most the files other threads are capturing right now.
    auto next = std::find_if(capturing_.begin(), capturing_.end(), unclaimed);
    if (next != capturing_.end()) ino = *next;
  }
  if (ino != 0) capture_claimed_.insert(ino);
  return ino;
}

Status SqliteWorkspace::CaptureFile(InodeId ino, CaptureRun& run, const Chunker& chunker, ZeroChunk& zero) {
  CommitPlan::Capture& c = run.plan.captures.at(ino);  // this thread's alone while claimed
  // The bytes its extents name are still those of the cut: writers wait,
  // and data files are neither removed nor shortened while a capture runs.
  // (No data file behind extents means they only hold punched zeros.)
  Status opened = Status::Ok();
  if (!c.plan.extents.empty()) {
    auto file = files_.Get(ino, false);
    if (file.ok()) c.plan.file = *file;
    opened = file.status();
  }
  if (opened.ok() && c.input.size >= chunker.params().max_size) {
    // Holes in its written ranges are chunked without being read.
    auto data = files_.DataRanges(ino, 0, c.input.size);
    if (data.ok()) c.input.holes = Uncovered(c.input.written, *data);
    opened = data.status();
  }
  auto read = [&](uint64_t offset, size_t n, char* out) { return files_.Read(c.plan, offset, n, out); };
  auto put = [&](std::string_view data) -> Result<Hash> {
    STRATA_ASSIGN_OR_RETURN(PutResult r, store_.Put(ObjectType::kChunk, data));
    if (r.stored) run.objects_written++;
    return r.id;
  };
  uint64_t hashed = 0;
  Result<std::vector<ChunkRef>> chunks = opened;
  if (opened.ok()) chunks = Rechunk(chunker, zero, c.input, read, put, &hashed);
  c.plan.file.reset();  // a descriptor only while a thread reads it
  {
    MutexLock lock(&mu_);
    capturing_.erase(ino);
    capture_claimed_.erase(ino);
    wanted_.erase(ino);
  }
  capture_cv_.NotifyAll();
  if (!chunks.ok()) return AsEio(chunks.status(), "capturing " + CapturedPath(run.plan, ino));
  c.chunks = std::move(*chunks);
  run.bytes_hashed += hashed;
  run.files++;
  if (run.progress != nullptr) run.progress->FileCaptured(c.input.size);
  return Status::Ok();
}

void SqliteWorkspace::CaptureLoop(CaptureRun& run) {
  const Chunker chunker = store_.NewChunker();
  // Per thread: it remembers whether it stored the zero chunk (the store
  // drops a second copy).
  ZeroChunk zero(chunker, [this](std::string_view data) { return store_.ObjectId(ObjectType::kChunk, data); });
  while (!run.failed) {
    InodeId ino = 0;
    {
      MutexLock lock(&mu_);
      ino = ClaimCapture();
    }
    if (ino == 0) return;
    if (Status s = CaptureFile(ino, run, chunker, zero); !s.ok()) {
      MutexLock lock(&run.mu);
      if (!run.failed.exchange(true)) run.error = std::move(s);
      return;
    }
  }
}

std::string SqliteWorkspace::CapturedPath(const CommitPlan& plan, InodeId ino) {
  // Only for messages: "inode N" when the cut names it nowhere.
  for (const auto& [dir, d] : plan.dirs)
    for (const auto& e : d.entries)
      if (e.ino == ino && e.captured) return "'" + (d.path.empty() ? e.entry.name : d.path + "/" + e.entry.name) + "'";
  return "inode " + std::to_string(ino);
}

Status SqliteWorkspace::CaptureFiles(CommitPlan& plan, CommitProgress* progress) {
  CaptureRun run{plan, progress};
  const size_t threads = CaptureThreads(capture_threads_, plan.captures.size());
  {
    // This thread captures too; the pool's threads join it, and are all
    // done when the pool goes.
    std::unique_ptr<ThreadPool> pool;
    if (threads > 1) {
      pool = std::make_unique<ThreadPool>(threads - 1, threads);
      for (size_t i = 1; i < threads; ++i) pool->Submit([this, &run] { CaptureLoop(run); });
    }
    CaptureLoop(run);
  }
  plan.stats.files_captured += run.files;
  plan.stats.bytes_hashed += run.bytes_hashed;
  plan.stats.objects_written += run.objects_written;
  MutexLock lock(&run.mu);
  return run.error;
}

}  // namespace strata::workspace_internal
