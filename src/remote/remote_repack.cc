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

namespace {

class Rewriter {
 public:
  Rewriter(Store& store, S3Backend& backend, Progress* progress)
      : store_(store), backend_(backend), progress_(progress) {}

  Result<RewriteResult> Run(const std::vector<std::pair<std::string, std::vector<PackEntry>>>& live) {
    // Each GET is a round trip: a batch of packs is fetched in parallel (as
    // Store::Open reads footers), then copied in order; a batch at a time
    // keeps what is held in memory to a few packs.
    constexpr size_t kParallel = 8;
    for (size_t first = 0; first < live.size(); first += kParallel) {
      const size_t n = std::min(kParallel, live.size() - first);
      std::vector<Fetched> fetched(n);
      {
        ThreadPool pool(n);
        for (size_t i = 0; i < n; i++)
          pool.Submit([&, i] { fetched[i] = Fetch(live[first + i].first, live[first + i].second); });
      }
      for (size_t i = 0; i < n; i++) {
        STRATA_RETURN_IF_ERROR(fetched[i].status);
        STRATA_RETURN_IF_ERROR(CopyPack(live[first + i].first, live[first + i].second, fetched[i]));
      }
    }
    STRATA_RETURN_IF_ERROR(Seal());
    return std::move(result_);
  }

 private:
  struct Fetched {
    Status status;
    bool gone = false;   // the pack went meanwhile
    uint64_t begin = 0;  // offset of span in the pack
    std::string span;
  };

  // One GET for the span of a pack's live objects: packs chosen are small or
  // mostly dead, and reading them through the block cache would fill it with
  // packs about to go. Safe to call from several threads.
  Fetched Fetch(const std::string& name, const std::vector<PackEntry>& entries) {
    Fetched f;
    if (entries.empty()) return f;
    uint64_t end = 0;
    f.begin = UINT64_MAX;
    for (const PackEntry& e : entries) {
      f.begin = std::min(f.begin, e.offset);
      end = std::max(end, e.offset + e.stored_len);
    }
    auto file = backend_.OpenPackUncached(name);
    if (!file.ok()) {
      f.gone = file.status().IsNotFound();
      if (!f.gone) f.status = file.status();
      return f;
    }
    if (end > (*file)->Size()) {
      f.status = Status::Corruption("repacking: pack " + name + " is shorter than its footer says");
      return f;
    }
    Status read = (*file)->Read(f.begin, end - f.begin, &f.span);
    f.gone = read.IsNotFound();
    if (!read.ok() && !f.gone) f.status = read.WithContext("repacking pack " + name);
    return f;
  }

  Status CopyPack(const std::string& name, const std::vector<PackEntry>& entries, const Fetched& fetched) {
    // Gone meanwhile (another gc deleted or repacked it): nothing of it is
    // copied, and this gc does not delete it.
    if (entries.empty() || fetched.gone) return Status::Ok();
    const uint64_t begin = fetched.begin;
    const std::string& span = fetched.span;
    result_.bytes_read += span.size();
    for (const PackEntry& e : entries) {
      if (!added_.insert(e.id).second) continue;  // held by two packs being rewritten
      const std::string_view stored = std::string_view(span).substr(e.offset - begin, e.stored_len);
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
