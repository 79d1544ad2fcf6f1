#include "snapshot/importer.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "env/file_tree.h"
#include "snapshot/import_cache.h"
#include "util/progress.h"
#include "util/thread_pool.h"

namespace strata {
namespace {

// One path of the source tree, as found by the walk.
struct Node {
  std::string path;  // in the source tree
  std::string rel;   // from the root, '/'-separated; used for hard-link targets
  FileStat st;
  TreeEntry entry;   // everything but the chunks of files and the ids of subtrees
  std::vector<std::unique_ptr<Node>> children;  // directories
};

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

class Importer {
 public:
  Importer(Store& store, const ImportOptions& options)
      : store_(store), options_(options), chunker_(store.NewChunker()), progress_("import", 0, 0) {}

  Result<ImportStats> Run(const std::string& source) {
    // Chunks found already stored (and the import cache's chunk lists) are
    // counted on until the branch points at the new commit: gc must wait.
    STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store_.BeginWrite());
    auto start = std::chrono::steady_clock::now();
    STRATA_ASSIGN_OR_RETURN(FileStat root_st, LstatPath(source));
    if (!S_ISDIR(root_st.mode)) return Status::InvalidArgument(source + " is not a directory");
    STRATA_ASSIGN_OR_RETURN(FileStat store_st, LstatPath(store_.path()));
    store_dir_ = {store_st.dev, store_st.ino};
    if (store_dir_ == std::make_pair(root_st.dev, root_st.ino))
      return Status::InvalidArgument(source + " is the store itself");
    Node root;
    root.path = source;
    root.st = root_st;
    STRATA_ASSIGN_OR_RETURN(root.entry.xattrs, ReadXattrs(source));
    if (!options_.cache_path.empty()) {
      STRATA_ASSIGN_OR_RETURN(cache_, ImportCache::Open(options_.cache_path));
      STRATA_ASSIGN_OR_RETURN(cache_root_, CanonicalPath(source));
      STRATA_RETURN_IF_ERROR(cache_->Load(cache_root_));
    }
    // File data is read by the pool while the walk goes on, in batches so that
    // a tree of small files does not cost a thread hand-off per file.
    size_t threads = options_.threads > 0 ? options_.threads : 4 * std::max(1u, std::thread::hardware_concurrency());
    pool_ = std::make_unique<ThreadPool>(threads);
    {
      // Directories are scanned in parallel too: on a cold cache the walk is a
      // chain of small random reads, and several in flight hide their latency.
      // The queue is unbounded because scans submit the scans of subdirectories.
      ThreadPool scanners(threads, SIZE_MAX);
      scanners_ = &scanners;
      scanners.Submit([this, &root] { Scan(&root); });
      scanners.Wait();
      scanners_ = nullptr;
    }
    Status walked_ok = FirstError();
    if (walked_ok.ok()) walked_ok = AssignInOrder(&root);
    auto walked = std::chrono::steady_clock::now();
    stats_.walk_seconds = Seconds(start, walked);
    pool_.reset();  // waits for every file
    STRATA_RETURN_IF_ERROR(walked_ok);
    STRATA_RETURN_IF_ERROR(FirstError());
    progress_.SetTotals(files_total_, total_bytes_);
    auto read = std::chrono::steady_clock::now();
    stats_.data_seconds = Seconds(walked, read);
    STRATA_ASSIGN_OR_RETURN(stats_.root, StoreTree(&root));
    auto trees = std::chrono::steady_clock::now();
    stats_.tree_seconds = Seconds(read, trees);

    STRATA_ASSIGN_OR_RETURN(auto head, store_.GetRef(options_.branch));
    Commit commit;
    commit.root = stats_.root;
    commit.root_meta = {root.st.mode & 07777u, root.st.uid, root.st.gid, root.st.mtime_sec, root.st.mtime_nsec,
                        root.entry.xattrs};
    if (head) commit.parents.push_back(*head);
    commit.author = options_.author;
    commit.time_ns = options_.time_ns ? *options_.time_ns
                                      : std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count();
    commit.message = options_.message;
    STRATA_ASSIGN_OR_RETURN(PutResult put, store_.Put(ObjectType::kCommit, EncodeCommit(commit)));
    store_.AddLogicalBytes(stats_.bytes);
    // Everything must be durable before the branch points at it, and before
    // the import cache names its chunks.
    STRATA_RETURN_IF_ERROR(store_.Flush());
    if (cache_) STRATA_RETURN_IF_ERROR(cache_->Save());
    STRATA_RETURN_IF_ERROR(store_.CompareAndSwapRef(options_.branch, head, put.id));
    progress_.Finish();
    stats_.commit = put.id;
    auto end = std::chrono::steady_clock::now();
    stats_.publish_seconds = Seconds(trees, end);
    stats_.seconds = Seconds(start, end);
    return stats_;
  }

 private:
  Status FirstError() {
    std::lock_guard<std::mutex> lock(stats_mu_);
    return first_error_;
  }

  void RecordError(const Status& s) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    if (first_error_.ok()) first_error_ = s;
  }

  // Scans one directory (in a scanner thread): stats every entry, reads
  // xattrs and symlink targets, queues the scans of subdirectories, and hands
  // singly-linked files to the readers right away. Entries are kept in sorted
  // order; nothing here depends on the order in which directories finish.
  void Scan(Node* dir) {
    if (Status s = ScanEntries(dir); !s.ok()) RecordError(s);
  }

  Status ScanEntries(Node* dir) {
    if (!FirstError().ok()) return Status::Ok();  // another scan failed: stop early
    STRATA_ASSIGN_OR_RETURN(auto names, ListDirectorySorted(dir->path));
    std::vector<Node*> batch;
    uint64_t batch_bytes = 0;
    for (const std::string& name : names) {
      auto node = std::make_unique<Node>();
      node->path = dir->path + "/" + name;
      node->rel = dir->rel.empty() ? name : dir->rel + "/" + name;
      if (!IsValidEntryName(name)) return Status::InvalidArgument("cannot import " + node->path + ": invalid name");
      STRATA_ASSIGN_OR_RETURN(node->st, LstatPath(node->path));
      // A store inside the tree is left out: it changes while it is imported.
      if (S_ISDIR(node->st.mode) && store_dir_ == std::make_pair(node->st.dev, node->st.ino)) {
        std::lock_guard<std::mutex> lock(stats_mu_);
        stats_.excluded++;
        continue;
      }
      TreeEntry& e = node->entry;
      e.name = name;
      e.kind = EntryKindOfMode(node->st.mode);
      e.mode = node->st.mode & 07777u;
      e.uid = node->st.uid;
      e.gid = node->st.gid;
      e.mtime_sec = node->st.mtime_sec;
      e.mtime_nsec = node->st.mtime_nsec;
      STRATA_ASSIGN_OR_RETURN(e.xattrs, ReadXattrs(node->path));
      switch (e.kind) {
        case EntryKind::kDirectory: {
          Node* child = node.get();
          scanners_->Submit([this, child] { Scan(child); });
          break;
        }
        case EntryKind::kSymlink: {
          STRATA_ASSIGN_OR_RETURN(e.target, ReadSymlink(node->path));
          if (e.target.empty()) return Status::InvalidArgument("cannot import " + node->path + ": empty symlink");
          break;
        }
        case EntryKind::kCharDevice:
        case EntryKind::kBlockDevice:
          e.rdev = node->st.rdev;
          break;
        case EntryKind::kFile: {
          // Files with several names wait for AssignInOrder, which decides
          // which name carries the data.
          if (node->st.nlink > 1) break;
          STRATA_ASSIGN_OR_RETURN(bool cached, ReuseCachedChunks(node.get()));
          if (cached) break;
          CountToRead(node->st.size);
          batch.push_back(node.get());
          batch_bytes += node->st.size;
          if (batch.size() >= kBatchFiles || batch_bytes >= kBatchBytes) {
            SubmitBatch(std::move(batch));
            batch.clear();
            batch_bytes = 0;
          }
          break;
        }
        case EntryKind::kFifo:
        case EntryKind::kSocket:
        case EntryKind::kHardlink:  // never from KindOf
          break;
      }
      dir->children.push_back(std::move(node));
    }
    SubmitBatch(std::move(batch));
    return Status::Ok();
  }

  // Walks the scanned tree in sorted depth-first order, which is the order
  // export uses: the first name of a multiply-linked inode carries its data,
  // later names become hard-link entries. Also counts what the tree holds.
  Status AssignInOrder(Node* dir) {
    for (auto& child : dir->children) {
      Node* node = child.get();
      TreeEntry& e = node->entry;
      if (e.kind != EntryKind::kDirectory && RecordAsHardlink(node)) continue;
      switch (e.kind) {
        case EntryKind::kDirectory:
          stats_.directories++;
          STRATA_RETURN_IF_ERROR(AssignInOrder(node));
          break;
        case EntryKind::kFile: {
          stats_.files++;
          if (node->st.nlink <= 1) break;  // already handed to the readers
          STRATA_ASSIGN_OR_RETURN(bool cached, ReuseCachedChunks(node));
          if (cached) break;
          CountToRead(node->st.size);
          SubmitBatch({node});
          break;
        }
        case EntryKind::kSymlink:
          stats_.symlinks++;
          break;
        default:
          stats_.specials++;
          break;
      }
    }
    return Status::Ok();
  }

  void CountToRead(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    files_total_++;
    total_bytes_ += bytes;
    progress_.SetTotals(files_total_, total_bytes_);
  }

  // A second name of an inode seen earlier in the walk becomes a hard-link
  // entry naming the first. Directories cannot be hard links.
  bool RecordAsHardlink(Node* node) {
    if (node->st.nlink <= 1) return false;
    auto [it, first] = first_link_.emplace(std::make_pair(node->st.dev, node->st.ino), node->rel);
    if (first) return false;
    node->entry.kind = EntryKind::kHardlink;
    node->entry.target = it->second;
    stats_.hardlinks++;
    return true;
  }

  // Hands files to the readers as one task: a tree of small files must not
  // cost a thread hand-off per file.
  void SubmitBatch(std::vector<Node*> batch) {
    if (batch.empty()) return;
    pool_->Submit([this, batch = std::move(batch)] {
      for (Node* node : batch) {
        if (!FirstError().ok()) return;
        if (Status s = ReadFile(node); !s.ok()) return RecordError(s);
      }
    });
  }

  // Takes a file's chunk list from the import cache when its stat is unchanged
  // and every chunk is still in the store.
  Result<bool> ReuseCachedChunks(Node* node) {
    if (!cache_) return false;
    const std::vector<ChunkRef>* chunks = cache_->Find(CacheKey(node), node->st);
    if (chunks == nullptr) return false;
    for (const ChunkRef& c : *chunks) {
      STRATA_ASSIGN_OR_RETURN(bool present, store_.Contains(c.id));
      if (!present) return false;
    }
    node->entry.chunks = *chunks;
    node->entry.size = node->st.size;
    std::lock_guard<std::mutex> lock(stats_mu_);  // workers add to the same counters
    stats_.cached_files++;
    stats_.bytes += node->st.size;
    return true;
  }

  std::string CacheKey(const Node* node) const { return cache_root_ + "/" + node->rel; }

  // Reads, chunks, hashes, compresses and stores one file's data (in a worker).
  Status ReadFile(Node* node) {
    const size_t max = chunker_.params().max_size;
    STRATA_ASSIGN_OR_RETURN(SourceFile file, SourceFile::Open(node->path, /*sequential=*/node->st.size > max));
    thread_local std::string buf;  // reused: most files are small, allocations would dominate
    buf.clear();
    size_t start = 0;  // where the next chunk begins in buf
    bool at_end = false;
    uint64_t read_total = 0;
    uint64_t chunks = 0, new_chunks = 0, new_bytes = 0, size = 0;
    std::vector<ChunkRef>& refs = node->entry.chunks;
    while (true) {
      // Keep at least max bytes ahead of the cut point, since a cut may lie that far.
      while (!at_end && buf.size() - start < max) {
        if (start > 0) {
          buf.erase(0, start);
          start = 0;
        }
        // Ask for what the file should still hold (+1 to see its end in one
        // call): a buffer sized for the largest chunk would cost a 4 MiB
        // zero-fill for every small file.
        uint64_t expected = node->st.size > read_total ? node->st.size - read_total : 0;
        size_t want = static_cast<size_t>(std::min<uint64_t>(2 * max, expected + 1));
        want = std::max<size_t>(want, 4096);
        STRATA_ASSIGN_OR_RETURN(size_t n, file.ReadAppend(want, &buf));
        read_total += n;
        at_end = n < want;  // a short read is the end of the file
      }
      size_t avail = buf.size() - start;
      if (avail == 0) break;
      size_t cut = chunker_.NextCut(reinterpret_cast<const uint8_t*>(buf.data()) + start, avail);
      std::string_view chunk(buf.data() + start, cut);
      STRATA_ASSIGN_OR_RETURN(PutResult put, store_.Put(ObjectType::kChunk, chunk));
      refs.push_back({put.id, cut});
      chunks++;
      if (put.stored) {
        new_chunks++;
        new_bytes += put.stored_bytes;
      }
      size += cut;
      start += cut;
      progress_.Add(0, cut);
    }
    node->entry.size = size;
    progress_.Add(1, 0);
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.bytes += size;
    stats_.bytes_read += size;
    stats_.chunks += chunks;
    stats_.new_chunks += new_chunks;
    stats_.new_bytes += new_bytes;
    return Status::Ok();
  }

  // Stores the trees below dir bottom-up and returns dir's tree id.
  Result<Hash> StoreTree(Node* dir) {
    Tree tree;
    tree.entries.reserve(dir->children.size());
    for (auto& child : dir->children) {
      if (child->entry.kind == EntryKind::kDirectory) {
        STRATA_ASSIGN_OR_RETURN(child->entry.subtree, StoreTree(child.get()));
      }
      if (cache_ && child->entry.kind == EntryKind::kFile) cache_->Record(CacheKey(child.get()), child->st, child->entry.chunks);
      tree.entries.push_back(std::move(child->entry));
    }
    dir->children.clear();  // free memory as we go up
    STRATA_ASSIGN_OR_RETURN(PutResult put, store_.Put(ObjectType::kTree, EncodeTree(tree)));
    if (put.stored) stats_.new_bytes += put.stored_bytes;
    return put.id;
  }

  Store& store_;
  const ImportOptions& options_;
  Chunker chunker_;
  Progress progress_;
  std::unique_ptr<ImportCache> cache_;  // null without a cache_path
  std::string cache_root_;              // the source's canonical path: cache keys are below it
  std::map<std::pair<dev_t, ino_t>, std::string> first_link_;
  std::pair<dev_t, ino_t> store_dir_;
  static constexpr size_t kBatchFiles = 64;
  static constexpr uint64_t kBatchBytes = 8 << 20;
  std::unique_ptr<ThreadPool> pool_;  // readers: from the walk's start until all data is read
  ThreadPool* scanners_ = nullptr;    // directory scanners, during the walk
  uint64_t files_total_ = 0, total_bytes_ = 0;  // files to read, for the progress bar; GUARDED_BY(stats_mu_)
  std::mutex stats_mu_;
  Status first_error_;  // GUARDED_BY(stats_mu_): the first failure of a worker
  ImportStats stats_;   // counters the workers update are GUARDED_BY(stats_mu_)
};

}  // namespace

Result<ImportStats> ImportTree(Store& store, const std::string& source, const ImportOptions& options) {
  if (!IsValidRefName(options.branch))
    return Status::InvalidArgument("'" + options.branch + "' is not a valid branch name");
  Importer importer(store, options);
  auto result = importer.Run(source);
  if (!result.ok()) return result.status();
  return result;
}

}  // namespace strata
