#include "store/fsck.h"

#include <unordered_set>

#include "store/forget.h"
#include "store/index.h"

namespace strata {

Result<FsckReport> CheckStore(Store& store, const std::vector<RootSet>& extra_roots, Progress* progress) {
  STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store.BeginWrite());
  FsckReport report;
  STRATA_ASSIGN_OR_RETURN(report.integrity, VerifyStore(store, progress));

  STRATA_ASSIGN_OR_RETURN(auto objects, store.index()->ListObjects());
  std::unordered_set<Hash> stored;
  stored.reserve(objects.size());
  for (const auto& [id, stored_len] : objects) stored.insert(id);

  std::vector<RootSet> roots = extra_roots;
  STRATA_ASSIGN_OR_RETURN(auto refs, store.ListRefs());
  for (const auto& [name, id] : refs) roots.push_back({"branch " + name, id, {}, {}});
  report.roots = roots.size();

  // A forgotten commit's tree may be gone (gc): it is not looked for.
  STRATA_ASSIGN_OR_RETURN(auto forgotten, ForgottenCommits(store));
  Reachability walk(store, &stored, nullptr, &forgotten);
  for (const RootSet& root : roots) walk.Add(root);
  report.missing = walk.problems();
  for (const auto& [id, stored_len] : objects) (walk.Marked(id) ? report.reachable : report.unreachable)++;
  return report;
}

}  // namespace strata
