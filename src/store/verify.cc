#include "store/verify.h"

#include <map>
#include <set>
#include <mutex>

#include "store/backend.h"
#include "store/index.h"
#include "store/pack_reader.h"
#include "util/thread_pool.h"

namespace strata {
namespace {

class PackVerifier {
 public:
  PackVerifier(Store& store, VerifyReport* report, std::mutex* mu) : store_(store), report_(report), mu_(mu) {}

  void Verify(const std::string& name) {
    auto file = store_.backend()->OpenPackUncached(name);  // read once: keep it out of any cache
    if (!file.ok()) return Problem(name, "", file.status().message());
    std::string bytes;
    if (Status s = (*file)->Read(0, (*file)->Size(), &bytes); !s.ok()) return Problem(name, "", s.message());
    Count(0, bytes.size());

    bool checksum_ok = false;
    if (bytes.size() >= Hash::kSize) {
      Hash sum = Sha256::Of(bytes.data(), bytes.size() - Hash::kSize);
      checksum_ok = sum == Hash::FromBytes(bytes.data() + bytes.size() - Hash::kSize) &&
                    PackNameToHash(name) == sum;
    }
    if (!checksum_ok) Problem(name, "", "pack checksum does not match its contents or its name");

    // Objects come from the footer; if the footer itself is damaged, fall back
    // to what the index says this pack holds, so damaged objects can still be named.
    auto entries = ReadPackIndex(**file, store_.cipher());
    if (!entries.ok()) {
      Problem(name, "", entries.status().message());
      entries = store_.index()->ObjectsInPack(name);
      if (!entries.ok()) return Problem(name, "", entries.status().message());
    } else {
      CompareWithIndex(name, *entries);
    }
    for (const PackEntry& e : *entries) {
      Count(1, 0);
      if (e.offset + e.stored_len > bytes.size()) {
        Problem(name, e.id.ToHex(), "object lies outside the pack");
        continue;
      }
      auto raw = DecodeObject(e, std::string_view(bytes).substr(e.offset, e.stored_len), store_.cipher());
      if (!raw.ok()) Problem(name, e.id.ToHex(), raw.status().message());
    }
  }

 private:
  void CompareWithIndex(const std::string& name, const std::vector<PackEntry>& footer) {
    auto indexed = store_.index()->ObjectsInPack(name);
    if (!indexed.ok()) return Problem(name, "", indexed.status().message());
    std::map<Hash, const PackEntry*> by_id;
    for (const PackEntry& e : footer) by_id[e.id] = &e;
    for (const PackEntry& e : *indexed) {
      auto it = by_id.find(e.id);
      if (it == by_id.end() || it->second->offset != e.offset || it->second->stored_len != e.stored_len ||
          it->second->type != e.type || it->second->codec != e.codec || it->second->raw_len != e.raw_len)
        Problem(name, e.id.ToHex(), "index entry disagrees with the pack footer");
    }
  }

  void Count(uint64_t objects, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(*mu_);
    report_->objects += objects;
    report_->bytes += bytes;
  }

  void Problem(const std::string& pack, const std::string& object, const std::string& message) {
    std::lock_guard<std::mutex> lock(*mu_);
    report_->problems.push_back({pack, object, message});
  }

  Store& store_;
  VerifyReport* report_;
  std::mutex* mu_;
};

}  // namespace

Result<VerifyReport> VerifyStore(Store& store, Progress* progress) {
  // A gc removing a pack while it is read here would look like damage.
  STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store.BeginWrite());
  VerifyReport report;
  std::mutex mu;
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> packs, store.backend()->ListPacks());
  STRATA_ASSIGN_OR_RETURN(auto indexed, store.index()->ListPacks());
  std::set<std::string> present(packs.begin(), packs.end());
  for (const auto& [name, size] : indexed) {
    if (!present.count(name))
      report.problems.push_back({name, "", "pack is in the index but missing: " + store.backend()->PackLocation(name)});
  }
  uint64_t total_bytes = 0;
  for (const auto& [name, size] : indexed) total_bytes += size;
  if (progress) progress->SetTotals(packs.size(), total_bytes);

  {
    ThreadPool pool;
    PackVerifier verifier(store, &report, &mu);
    for (const std::string& name : packs) {
      pool.Submit([&verifier, &name, progress, &indexed] {
        verifier.Verify(name);
        auto it = indexed.find(name);
        if (progress) progress->Add(1, it == indexed.end() ? 0 : it->second);
      });
    }
    pool.Wait();
  }
  report.packs = packs.size();

  STRATA_ASSIGN_OR_RETURN(auto refs, store.ListRefs());
  for (const auto& [name, id] : refs) {
    auto loc = store.index()->Lookup(id);
    if (!loc.ok() || !loc->has_value() || (*loc)->entry.type != ObjectType::kCommit)
      report.problems.push_back({"", id.ToHex(), "branch '" + name + "' points at a commit that is not stored"});
  }
  return report;
}

}  // namespace strata
