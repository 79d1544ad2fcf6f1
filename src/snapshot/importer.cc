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

EntryKind KindOf(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return EntryKind::kFile;
    case S_IFDIR: return EntryKind::kDirectory;
    case S_IFLNK: return EntryKind::kSymlink;
    case S_IFIFO: return EntryKind::kFifo;
    case S_IFSOCK: return EntryKind::kSocket;
    case S_IFCHR: return EntryKind::kCharDevice;
    case S_IFBLK: return EntryKind::kBlockDevice;
  }
  return EntryKind::kFile;
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

class Importer {
 public:
  Importer(Store& store, const ImportOptions& options)
      : store_(store), options_(options), chunker_(store.config().chunker), progress_("import", 0, 0) {}

  Result<ImportStats> Run(const std::string& source) {
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
    if (options_.use_cache) {
      STRATA_ASSIGN_OR_RETURN(cache_, ImportCache::Open(store_.path() + "/import-cache.db"));
      STRATA_ASSIGN_OR_RETURN(cache_root_, CanonicalPath(source));
      STRATA_RETURN_IF_ERROR(cache_->Load(cache_root_));
    }
    STRATA_RETURN_IF_ERROR(Walk(&root));
    progress_.SetTotals(files_.size(), total_bytes_);
    auto walked = std::chrono::steady_clock::now();
    stats_.walk_seconds = Seconds(start, walked);

    STRATA_RETURN_IF_ERROR(ReadFiles());
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
    commit.time_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
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
  // Lists every path below dir in sorted order, depth first, and fills in
  // everything but file contents. Hard links are resolved here, in this order,
  // so the first path of an inode is the one that carries its data.
  Status Walk(Node* dir) {
    STRATA_ASSIGN_OR_RETURN(auto names, ListDirectorySorted(dir->path));
    for (const std::string& name : names) {
      auto node = std::make_unique<Node>();
      node->path = dir->path + "/" + name;
      node->rel = dir->rel.empty() ? name : dir->rel + "/" + name;
      if (!IsValidEntryName(name)) return Status::InvalidArgument("cannot import " + node->path + ": invalid name");
      STRATA_ASSIGN_OR_RETURN(node->st, LstatPath(node->path));
      // A store inside the tree is left out: it changes while it is imported.
      if (S_ISDIR(node->st.mode) && store_dir_ == std::make_pair(node->st.dev, node->st.ino)) {
        stats_.excluded++;
        continue;
      }
      TreeEntry& e = node->entry;
      e.name = name;
      e.kind = KindOf(node->st.mode);
      e.mode = node->st.mode & 07777u;
      e.uid = node->st.uid;
      e.gid = node->st.gid;
      e.mtime_sec = node->st.mtime_sec;
      e.mtime_nsec = node->st.mtime_nsec;
      STRATA_ASSIGN_OR_RETURN(e.xattrs, ReadXattrs(node->path));
      if (e.kind != EntryKind::kDirectory && RecordAsHardlink(node.get())) {
        dir->children.push_back(std::move(node));
        continue;
      }
      switch (e.kind) {
        case EntryKind::kFile:
          STRATA_RETURN_IF_ERROR(AddFile(node.get()));
          break;
        case EntryKind::kDirectory: {
          STRATA_RETURN_IF_ERROR(Walk(node.get()));
          stats_.directories++;
          break;
        }
        case EntryKind::kSymlink: {
          STRATA_ASSIGN_OR_RETURN(e.target, ReadSymlink(node->path));
          if (e.target.empty()) return Status::InvalidArgument("cannot import " + node->path + ": empty symlink");
          stats_.symlinks++;
          break;
        }
        case EntryKind::kCharDevice:
        case EntryKind::kBlockDevice:
          e.rdev = node->st.rdev;
          stats_.specials++;
          break;
        case EntryKind::kFifo:
        case EntryKind::kSocket:
        case EntryKind::kHardlink:  // never from KindOf
          stats_.specials++;
          break;
      }
      dir->children.push_back(std::move(node));
    }
    return Status::Ok();
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

  // A regular file: one the import cache knows, or one to read.
  Status AddFile(Node* node) {
    stats_.files++;
    STRATA_ASSIGN_OR_RETURN(bool cached, ReuseCachedChunks(node));
    if (!cached) {
      files_.push_back(node);
      total_bytes_ += node->st.size;
    }
    return Status::Ok();
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
    stats_.cached_files++;
    stats_.bytes += node->st.size;
    return true;
  }

  std::string CacheKey(const Node* node) const { return cache_root_ + "/" + node->rel; }

  // Chunks, hashes, compresses and stores every file's data on all cores.
  Status ReadFiles() {
    std::mutex mu;
    Status first_error;
    {
      // More workers than cores: a worker waiting for a cold file to come off
      // the disk leaves its core to one that is compressing.
      size_t threads = options_.threads > 0 ? options_.threads : 4 * std::max(1u, std::thread::hardware_concurrency());
      ThreadPool pool(threads);
      for (Node* node : files_) {
        pool.Submit([this, node, &mu, &first_error] {
          {
            std::lock_guard<std::mutex> lock(mu);
            if (!first_error.ok()) return;
          }
          Status s = ReadFile(node);
          if (!s.ok()) {
            std::lock_guard<std::mutex> lock(mu);
            if (first_error.ok()) first_error = s;
          }
        });
      }
      pool.Wait();
    }
    return first_error;
  }

  Status ReadFile(Node* node) {
    STRATA_ASSIGN_OR_RETURN(SourceFile file, SourceFile::Open(node->path));
    const size_t max = chunker_.params().max_size;
    std::string buf;
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
        STRATA_ASSIGN_OR_RETURN(size_t n, file.ReadAppend(std::max<size_t>(want, 4096), &buf));
        read_total += n;
        at_end = n == 0;
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
  std::unique_ptr<ImportCache> cache_;  // null with use_cache off
  std::string cache_root_;              // the source's canonical path: cache keys are below it
  std::map<std::pair<dev_t, ino_t>, std::string> first_link_;
  std::pair<dev_t, ino_t> store_dir_;
  std::vector<Node*> files_;
  uint64_t total_bytes_ = 0;
  std::mutex stats_mu_;
  ImportStats stats_;
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
