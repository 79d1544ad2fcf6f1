#include "remote/remote_repack.h"

#include <algorithm>
#include <memory>

#include "remote/s3_backend.h"
#include "store/index.h"
#include "store/pack_merge.h"
#include "store/pack_reader.h"
#include "store/pack_writer.h"
#include "util/thread_pool.h"

namespace strata {

std::vector<std::string> PickPacksToRewrite(const std::vector<RepackCandidate>& packs, uint64_t pack_size,
                                            double threshold, uint64_t max_bytes) {
  std::vector<const RepackCandidate*> dead_most, small;
  for (const RepackCandidate& p : packs) {
    if (p.live_objects == 0 || p.size == 0) continue;
    if (static_cast<double>(p.live_bytes) < threshold * static_cast<double>(p.size)) dead_most.push_back(&p);
    else if (p.size < pack_size / kSmallPackShare) small.push_back(&p);
  }
  auto live_share = [](const RepackCandidate* p) { return static_cast<double>(p->live_bytes) / p->size; };
  std::sort(dead_most.begin(), dead_most.end(), [&](auto* a, auto* b) { return live_share(a) < live_share(b); });
  std::sort(small.begin(), small.end(), [](auto* a, auto* b) { return a->size < b->size; });
  std::vector<std::string> chosen;
  uint64_t budget = max_bytes;
  auto take = [&](const std::vector<const RepackCandidate*>& from) {
    size_t taken = 0;
    for (const RepackCandidate* p : from) {
      if (p->size > budget) break;  // sorted: what follows is no better a use of the budget
      budget -= p->size;
      chosen.push_back(p->name);
      taken++;
    }
    return taken;
  };
  take(dead_most);
  const size_t dead_chosen = chosen.size();
  // One small pack rewritten alone is a copy as small as itself; beside
  // rewritten dead packs it joins their live objects in a new pack.
  if (take(small) == 1 && dead_chosen == 0) chosen.clear();
  return chosen;
}

std::vector<ByteRange> CoalesceRanges(std::vector<PackEntry> entries, uint64_t max_gap) {
  std::sort(entries.begin(), entries.end(), [](const PackEntry& a, const PackEntry& b) { return a.offset < b.offset; });
  std::vector<ByteRange> ranges;
  for (const PackEntry& e : entries) {
    const uint64_t end = e.offset + e.stored_len;
    if (!ranges.empty() && e.offset <= ranges.back().end + max_gap) {
      ranges.back().end = std::max(ranges.back().end, end);
    } else {
      ranges.push_back(ByteRange{e.offset, end});
    }
  }
  return ranges;
}

namespace {

class Rewriter {
 public:
  Rewriter(Store& store, S3Backend& backend, Progress* progress)
      : store_(store), backend_(backend), progress_(progress) {}

  Result<RewriteResult> Run(const std::vector<std::pair<std::string, std::vector<PackEntry>>>& live) {
    // Each GET is a round trip: the ranges of a batch of packs are fetched
    // in parallel (as Store::Open reads footers), then copied in order; a
    // batch at a time keeps what is held in memory to a few packs' live bytes.
    constexpr size_t kPacksPerBatch = 16;
    for (size_t first = 0; first < live.size(); first += kPacksPerBatch) {
      const size_t n = std::min(kPacksPerBatch, live.size() - first);
      std::vector<Fetched> fetched(n);
      struct Task {
        size_t pack, range;
      };
      std::vector<Task> tasks;
      for (size_t i = 0; i < n; i++) {
        Open(live[first + i].first, live[first + i].second, fetched[i]);
        for (size_t r = 0; r < fetched[i].ranges.size(); r++) tasks.push_back({i, r});
      }
      {
        ThreadPool pool(std::min(tasks.size(), kPacksPerBatch));
        for (const Task& t : tasks) pool.Submit([&, t] { Read(live[first + t.pack].first, fetched[t.pack], t.range); });
      }
      for (size_t i = 0; i < n; i++) {
        Fetched& f = fetched[i];
        for (const Status& read : f.reads) {
          if (read.IsNotFound()) f.gone = true;
          else if (!read.ok() && f.status.ok()) f.status = read;
        }
        STRATA_RETURN_IF_ERROR(f.status);
        STRATA_RETURN_IF_ERROR(CopyPack(live[first + i].first, live[first + i].second, f));
      }
    }
    STRATA_RETURN_IF_ERROR(Seal());
    return std::move(result_);
  }

 private:
  struct Fetched {
    Status status;
    bool gone = false;  // the pack went meanwhile
    std::shared_ptr<RandomAccessFile> file;
    std::vector<ByteRange> ranges;  // of the live objects, sorted
    std::vector<std::string> data;  // data[i]: the bytes of ranges[i]
    std::vector<Status> reads;      // reads[i]: how reading ranges[i] went
  };

  // Only the ranges of a pack's live objects are read: packs chosen are
  // small or mostly dead, and the dead bytes between live objects are most
  // of a mostly-dead pack. Not through the block cache either: it would
  // fill with packs about to go.
  void Open(const std::string& name, const std::vector<PackEntry>& entries, Fetched& f) {
    if (entries.empty()) return;
    auto file = backend_.OpenPackUncached(name);
    if (!file.ok()) {
      f.gone = file.status().IsNotFound();
      if (!f.gone) f.status = file.status();
      return;
    }
    f.file = std::move(file).value();
    f.ranges = CoalesceRanges(entries, kRepackMaxGap);
    if (f.ranges.back().end > f.file->Size()) {
      f.status = Status::Corruption("repacking: pack " + name + " is shorter than its footer says");
      f.ranges.clear();
    }
    f.data.resize(f.ranges.size());
    f.reads.resize(f.ranges.size());
  }

  // Safe to call from several threads, for different ranges.
  void Read(const std::string& name, Fetched& f, size_t i) {
    const ByteRange& r = f.ranges[i];
    Status read = f.file->Read(r.begin, r.end - r.begin, &f.data[i]);
    f.reads[i] = read.ok() || read.IsNotFound() ? read : read.WithContext("repacking pack " + name);
  }

  Status CopyPack(const std::string& name, const std::vector<PackEntry>& entries, const Fetched& fetched) {
    // Gone meanwhile (another gc deleted or repacked it): nothing of it is
    // copied, and this gc does not delete it.
    if (entries.empty() || fetched.gone) return Status::Ok();
    for (const std::string& span : fetched.data) result_.bytes_read += span.size();
    for (const PackEntry& e : entries) {
      if (!added_.insert(e.id).second) continue;  // held by two packs being rewritten
      // The range that holds it: the last one starting at or before it.
      const auto after = std::upper_bound(fetched.ranges.begin(), fetched.ranges.end(), e.offset,
                                          [](uint64_t at, const ByteRange& r) { return at < r.begin; });
      const size_t i = static_cast<size_t>(after - fetched.ranges.begin()) - 1;
      const std::string_view stored =
          std::string_view(fetched.data[i]).substr(e.offset - fetched.ranges[i].begin, e.stored_len);
      // A damaged object is never copied on as if it were sound.
      if (auto raw = DecodeObject(e, stored, store_.cipher()); !raw.ok())
        return Status::Corruption("repacking: object " + e.id.ToHex() + " in pack " + name +
                                  " is damaged: " + raw.status().message() + " (run 'strata --remote NAME fsck')");
      if (!writer_) {
        STRATA_ASSIGN_OR_RETURN(writer_, PackWriter::Create(store_.env(), store_.path() + "/tmp", kPackVersion,
                                                            store_.cipher()));
      }
      STRATA_RETURN_IF_ERROR(writer_->Add(e.id, e.type, e.codec, stored, e.raw_len));
      pending_.push_back(e.id);
      if (progress_) progress_->Add(0, e.stored_len);
      if (writer_->size() >= store_.config().pack_size) STRATA_RETURN_IF_ERROR(Seal());
    }
    return Status::Ok();
  }

  // Uploads the open pack, then indexes it: from then on this machine reads
  // those objects there, and the copies are counted as made.
  Status Seal() {
    if (!writer_) return Status::Ok();
    std::unique_ptr<PackWriter> writer = std::move(writer_);
    STRATA_ASSIGN_OR_RETURN(SealedPack sealed, writer->Finish());
    STRATA_RETURN_IF_ERROR(backend_.PublishPack(sealed.local_path, sealed.name));
    STRATA_RETURN_IF_ERROR(
        store_.index()->ReplacePacks(NewPack{sealed.name, sealed.size, std::move(sealed.entries)}, {}));
    result_.packs_written++;
    result_.bytes_written += sealed.size;
    result_.copied.insert(pending_.begin(), pending_.end());
    pending_.clear();
    return Status::Ok();
  }

  Store& store_;
  S3Backend& backend_;
  Progress* const progress_;
  std::unique_ptr<PackWriter> writer_;
  std::vector<Hash> pending_;       // in writer_, not uploaded yet
  std::unordered_set<Hash> added_;  // to any new pack
  RewriteResult result_;
};

}  // namespace

Result<RewriteResult> RewriteLiveObjects(Store& store, S3Backend& backend,
                                         const std::vector<std::pair<std::string, std::vector<PackEntry>>>& live,
                                         Progress* progress) {
  return Rewriter(store, backend, progress).Run(live);
}

}  // namespace strata
