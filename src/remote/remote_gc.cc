#include "remote/remote_gc.h"

#include <algorithm>
#include <map>
#include <thread>

#include "remote/gc_protocol.h"
#include "remote/remote_repack.h"
#include "remote/s3_backend.h"
#include "store/gc.h"
#include "store/index.h"
#include "store/pack_reader.h"
#include "util/time_ns.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct PackContents {
  uint64_t size = 0;
  std::vector<PackEntry> objects;  // as its footer (or the index) gives them
};

class RemoteCollector {
 public:
  RemoteCollector(Store& store, S3Backend& backend, const RemoteGcOptions& options)
      : store_(store),
        backend_(backend),
        client_(backend.client()),
        options_(options),
        walk_(store, nullptr, options.progress, &options.forgotten) {}

  Result<RemoteGcReport> Run() {
    auto start = Clock::now();
    S3RequestCounts sent = client_.counts();
    // The requests since the last phase ended.
    auto phase_requests = [&] {
      const S3RequestCounts now = client_.counts();
      const S3RequestCounts phase = now - sent;
      sent = now;
      return phase;
    };
    Note("listing packs");
    STRATA_RETURN_IF_ERROR(ListPacks());
    Note("marking reachable objects");
    STRATA_RETURN_IF_ERROR(MarkRoots());
    std::vector<Hash> condemned;
    for (const auto& [name, pack] : packs_)
      for (const PackEntry& e : pack.objects)
        if (!walk_.Marked(e.id) && condemned_.insert(e.id).second) condemned.push_back(e.id);
    report_.objects_condemned = condemned.size();
    report_.mark_ms = MsSince(start);
    report_.requests_mark = phase_requests();

    start = Clock::now();
    STRATA_RETURN_IF_ERROR(Repack());
    report_.repack_ms = MsSince(start);
    report_.requests_repack = phase_requests();
    // Without garbage or copies there is nothing to delete, and no list to
    // wait for. With copies alone a list (naming no object) is still written
    // and waited for: the old packs go after the same wait as garbage.
    if (options_.dry_run || (condemned.empty() && copied_.empty())) {
      ChooseDeletions({});
      if (!options_.dry_run) STRATA_RETURN_IF_ERROR(RemoveRunOut(std::nullopt));
      report_.requests_delete = phase_requests();
      return report_;
    }

    start = Clock::now();
    STRATA_RETURN_IF_ERROR(Announce(condemned));
    STRATA_RETURN_IF_ERROR(WaitForWriters());
    report_.wait_ms = MsSince(start);
    report_.requests_wait = phase_requests();

    start = Clock::now();
    Note("marking what became reachable meanwhile");
    STRATA_RETURN_IF_ERROR(MarkRoots());
    STRATA_RETURN_IF_ERROR(Delete(ChooseDeletions({})));
    STRATA_RETURN_IF_ERROR(RemoveRunOut(list_time_));
    report_.delete_ms = MsSince(start);
    report_.requests_delete = phase_requests();
    return report_;
  }

 private:
  // The packs in the bucket now and what each holds.
  Status ListPacks() {
    STRATA_RETURN_IF_ERROR(backend_.ListPacks().status());
    STRATA_RETURN_IF_ERROR(backend_.ForgetVanishedPacks().status());
    STRATA_ASSIGN_OR_RETURN(auto indexed, store_.index()->ListPacks());
    STRATA_ASSIGN_OR_RETURN(auto partly, store_.index()->PacksWithObjectsElsewhere());
    const std::unordered_set<std::string> read_footer(partly.begin(), partly.end());
    for (const auto& [name, size] : indexed) {
      PackContents pack;
      pack.size = size;
      if (read_footer.count(name)) {
        // The index places some of its objects in other packs: its footer
        // says all it holds, which must all be dead before it goes.
        auto file = backend_.OpenPackUncached(name);
        auto entries = file.ok() ? ReadPackIndex(**file, store_.cipher()) : Result<std::vector<PackEntry>>(file.status());
        if (!entries.ok()) {
          if (entries.status().IsNotFound()) continue;  // gone meanwhile (another gc)
          return entries.status().WithContext("reading the footer of pack " + name);
        }
        pack.objects = std::move(entries).value();
      } else {
        STRATA_ASSIGN_OR_RETURN(pack.objects, store_.index()->ObjectsInPack(name));
      }
      report_.packs_before++;
      report_.pack_bytes_before += size;
      report_.objects_before += pack.objects.size();
      packs_.emplace(name, std::move(pack));
    }
    return Status::Ok();
  }

  Status MarkRoots() {
    STRATA_ASSIGN_OR_RETURN(report_.roots,
                            MarkFromRoots(store_, walk_, options_.extra_roots, "strata --remote NAME fsck"));
    report_.trees_read = walk_.trees_read();
    return Status::Ok();
  }

  // Copies the live objects of the packs worth rewriting into new packs
  // (uploaded and indexed when it returns); a dry run only chooses them.
  Status Repack() {
    if (options_.max_repack_bytes == 0) return Status::Ok();
    std::vector<RepackCandidate> candidates;
    for (const auto& [name, pack] : packs_) {
      RepackCandidate c{name, pack.size};
      for (const PackEntry& e : pack.objects) {
        if (!walk_.Marked(e.id)) continue;
        c.live_objects++;
        c.live_bytes += e.stored_len;
      }
      candidates.push_back(std::move(c));
    }
    const std::vector<std::string> chosen = PickPacksToRewrite(candidates, store_.config().pack_size,
                                                               options_.repack_threshold, options_.max_repack_bytes);
    rewritten_.insert(chosen.begin(), chosen.end());
    if (chosen.empty() || options_.dry_run) return Status::Ok();
    Note("copying the live objects of " + std::to_string(chosen.size()) + " packs into new packs");
    std::vector<std::pair<std::string, std::vector<PackEntry>>> live;
    for (const std::string& name : chosen) {
      std::vector<PackEntry> entries;
      for (const PackEntry& e : packs_.at(name).objects)
        if (walk_.Marked(e.id)) entries.push_back(e);
      live.emplace_back(name, std::move(entries));
    }
    STRATA_ASSIGN_OR_RETURN(RewriteResult copy, RewriteLiveObjects(store_, backend_, live, options_.progress));
    copied_ = std::move(copy.copied);
    report_.packs_written = copy.packs_written;
    report_.pack_bytes_written = copy.bytes_written;
    report_.repack_bytes_read = copy.bytes_read;
    return Status::Ok();
  }

  // Whether the bucket may lose this copy of an object: it was condemned and
  // is still unmarked, or it is in a new pack (a dry run: would be).
  bool MayGo(const std::string& pack, const PackEntry& e) const {
    if (copied_.count(e.id)) return true;
    if (walk_.Marked(e.id)) return options_.dry_run && rewritten_.count(pack);
    return options_.dry_run || condemned_.count(e.id);
  }

  // Packs whose every object may go, but for those in `not_deleted` (the
  // bucket may still hold them); counts them.
  std::vector<std::string> ChooseDeletions(const std::map<std::string, std::string>& not_deleted) {
    std::vector<std::string> dead;
    report_.packs_deleted = report_.pack_bytes_deleted = report_.objects_deleted = report_.bytes_deleted = 0;
    report_.packs_kept_partly_live = report_.packs_rewritten = report_.packs_not_deleted = 0;
    for (const auto& [name, pack] : packs_) {
      size_t going = 0, moved = 0;
      for (const PackEntry& e : pack.objects) {
        if (!MayGo(name, e)) continue;
        going++;
        if (walk_.Marked(e.id)) moved++;
      }
      if (going == 0) continue;
      if (going < pack.objects.size()) {
        report_.packs_kept_partly_live++;
        continue;
      }
      if (not_deleted.count(name)) {
        report_.packs_not_deleted++;
        continue;
      }
      dead.push_back(name);
      report_.packs_deleted++;
      if (moved) report_.packs_rewritten++;
      report_.pack_bytes_deleted += pack.size;
      for (const PackEntry& e : pack.objects) {
        if (walk_.Marked(e.id)) continue;  // its copy lives on
        report_.objects_deleted++;
        report_.bytes_deleted += e.stored_len;
      }
    }
    return dead;
  }

  // Writes the list, then learns from the bucket when it landed and which
  // leases were there before it.
  Status Announce(const std::vector<Hash>& condemned) {
    Note("announcing " + std::to_string(condemned.size()) + " condemned objects");
    const auto grace_s = std::chrono::ceil<std::chrono::seconds>(options_.grace).count();
    // How long after the list this gc may delete: it waits at most for a
    // lease to run out, plus grace, and gives itself grace more to finish.
    list_seconds_ = static_cast<uint32_t>(kWriterLeaseSeconds + 3 * grace_s);
    list_key_ = std::string(kCondemnedFolder) + RandomKeyId();
    list_start_ = Clock::now();
    STRATA_RETURN_IF_ERROR(client_.Put(list_key_, EncodeCondemned({list_seconds_, condemned})));
    STRATA_ASSIGN_OR_RETURN(auto lists, client_.List(kCondemnedFolder));
    auto own = std::find_if(lists.begin(), lists.end(), [&](const S3ObjectInfo& o) { return o.key == list_key_; });
    if (own == lists.end() || own->last_modified == 0)
      return Status::Unavailable("the gc list " + client_.location().Url() + "/" + list_key_ +
                                 " is not listed with its time after it was written");
    list_time_ = own->last_modified;
    listed_ = Clock::now();  // no earlier than the moment the list landed
    STRATA_ASSIGN_OR_RETURN(auto leases, client_.List(kLeasesFolder));
    for (const S3ObjectInfo& lease : leases) {
      // Server times are whole seconds: one written in the same second may
      // be older than the list, and is waited for.
      if (lease.last_modified > list_time_ + 1) continue;
      uint32_t seconds = kWriterLeaseSeconds;
      STRATA_ASSIGN_OR_RETURN(auto body, client_.Get(lease.key));
      if (!body) continue;  // its writer finished
      // A damaged lease is waited for as long as any lease may last.
      if (auto decoded = DecodeLease(body->data); decoded.ok()) seconds = std::max(seconds, *decoded);
      // When it runs out by this machine's clock, rounding towards later: it
      // was written before the end of second last_modified + 1, the list
      // after the start of list_time_, which landed before listed_.
      const auto runs_out = listed_ + std::chrono::seconds(lease.last_modified + 1 + seconds - list_time_);
      old_leases_.emplace(lease.key, runs_out);
    }
    report_.leases_waited = old_leases_.size();
    return Status::Ok();
  }

  Status WaitForWriters() {
    const auto earliest = listed_ + options_.grace;
    for (;;) {
      STRATA_ASSIGN_OR_RETURN(auto leases, client_.List(kLeasesFolder));
      std::unordered_set<std::string> present;
      for (const S3ObjectInfo& l : leases) present.insert(l.key);
      const auto now = Clock::now();
      size_t waiting = 0;
      for (const auto& [key, runs_out] : old_leases_)
        if (present.count(key) && now < runs_out + options_.grace) waiting++;
      if (waiting == 0 && now >= earliest) break;
      Note(waiting ? "waiting for " + std::to_string(waiting) + " writer(s) that began before the list"
                   : "waiting out the grace period");
      // One listing a second while writers run; to the end of the grace otherwise.
      Clock::duration pause = std::chrono::seconds(1);
      if (waiting == 0) pause = std::clamp<Clock::duration>(earliest - now, std::chrono::milliseconds(100), pause);
      std::this_thread::sleep_for(pause);
    }
    // Leases still there ran out: their writers died or gave up.
    STRATA_ASSIGN_OR_RETURN(auto leases, client_.List(kLeasesFolder));
    for (const S3ObjectInfo& l : leases) {
      if (!old_leases_.count(l.key)) continue;
      STRATA_RETURN_IF_ERROR(client_.Delete(l.key));
      report_.leases_expired++;
    }
    return Status::Ok();
  }

  Status Delete(const std::vector<std::string>& dead) {
    if (dead.empty()) return Status::Ok();
    // Near the end of its list's time later gcs may remove the list, and
    // writers stop storing its objects again: nothing may be deleted then.
    if (Clock::now() - list_start_ >= std::chrono::seconds(list_seconds_) - options_.grace)
      return Status::Unavailable("gc took longer than its list allows; nothing deleted, run it again");
    Note("deleting " + std::to_string(dead.size()) + " packs");
    // Forgotten here first: an interrupted run leaves this index naming
    // nothing that may be gone (the next opening indexes what stayed).
    STRATA_RETURN_IF_ERROR(backend_.ForgetPacks(dead));
    STRATA_ASSIGN_OR_RETURN(auto failed, backend_.DeletePacks(dead));
    if (failed.empty()) return Status::Ok();
    // Still in the bucket as far as anyone knows: counted as kept. This
    // index has forgotten them; the next opening of the remote indexes them
    // again from the listing, and the next gc deletes them.
    report_.not_deleted_reason = failed.front().second;
    ChooseDeletions(std::map<std::string, std::string>(failed.begin(), failed.end()));
    Note(std::to_string(failed.size()) + " packs were not deleted (" + report_.not_deleted_reason +
         "); the next gc deletes them");
    return Status::Ok();
  }

  // Removes the lists of earlier gcs that have run out by the server's clock
  // `now` (the time of this gc's list; nullopt: no list written, then the
  // newest time the listing shows stands in for it).
  Status RemoveRunOut(std::optional<int64_t> now) {
    STRATA_ASSIGN_OR_RETURN(auto lists, client_.List(kCondemnedFolder));
    if (!now) {
      int64_t newest = 0;
      for (const S3ObjectInfo& o : lists) newest = std::max(newest, o.last_modified);
      now = newest;
    }
    const auto grace_s = std::chrono::ceil<std::chrono::seconds>(options_.grace).count();
    for (const S3ObjectInfo& o : lists) {
      if (o.key == list_key_) continue;
      STRATA_ASSIGN_OR_RETURN(auto body, client_.Get(o.key));
      if (!body) continue;
      auto list = DecodeCondemned(body->data);
      if (!list.ok()) continue;  // never removed: writers refuse to work until someone looks
      if (o.last_modified + 1 + list->seconds + grace_s >= *now) continue;
      STRATA_RETURN_IF_ERROR(client_.Delete(o.key));
      report_.lists_removed++;
    }
    return Status::Ok();
  }

  void Note(const std::string& what) {
    if (options_.note && what != last_note_) options_.note(what);
    last_note_ = what;
  }

  Store& store_;
  S3Backend& backend_;
  S3Client& client_;
  const RemoteGcOptions& options_;
  Reachability walk_;
  RemoteGcReport report_;
  std::map<std::string, PackContents> packs_;
  std::unordered_set<Hash> condemned_;
  std::unordered_set<std::string> rewritten_;  // packs chosen for repacking
  std::unordered_set<Hash> copied_;            // live objects now in new packs
  std::string list_key_;
  uint32_t list_seconds_ = 0;
  int64_t list_time_ = 0;           // when the list landed, by the server's clock
  Clock::time_point list_start_;    // before the list was written
  Clock::time_point listed_;        // after the list was seen with its time
  std::map<std::string, Clock::time_point> old_leases_;  // key -> when it runs out
  std::string last_note_;
};

}  // namespace

Result<std::unordered_set<Hash>> RemoteForgottenCommits(Store& store) {
  auto* backend = dynamic_cast<S3Backend*>(store.backend());
  if (!backend) return Status::InvalidArgument("not a remote store");
  return ReadForgotten(backend->client());
}

Status RecordRemoteForgotten(Store& store, const std::vector<Hash>& commits) {
  auto* backend = dynamic_cast<S3Backend*>(store.backend());
  if (!backend) return Status::InvalidArgument("not a remote store");
  STRATA_RETURN_IF_ERROR(WriteForgotten(backend->client(), commits));
  return store.index()->AddForgotten(commits, NowNs());
}

std::optional<S3RequestCounts> RemoteRequestCounts(Store& store) {
  auto* backend = dynamic_cast<S3Backend*>(store.backend());
  if (!backend) return std::nullopt;
  return backend->client().counts();
}

Result<RemoteGcReport> CollectRemoteGarbage(Store& store, const RemoteGcOptions& options) {
  auto* backend = dynamic_cast<S3Backend*>(store.backend());
  if (!backend) return Status::InvalidArgument("not a remote store");
  return RemoteCollector(store, *backend, options).Run();
}

}  // namespace strata
