#include "store/revision.h"

#include <charconv>

#include "store/forget.h"

namespace strata {

namespace {
bool IsHex(std::string_view s) {
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return !s.empty();
}

// Shorter prefixes would match too many commits to be worth a lookup.
constexpr size_t kMinCommitPrefix = 4;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// HEAD without a workspace to speak of: the default branch's head.
Result<Hash> DefaultHead(Store& store) {
  STRATA_ASSIGN_OR_RETURN(auto refs, store.ListRefs());
  for (const auto& [name, id] : refs)
    if (name == kDefaultBranch) return id;
  if (refs.size() == 1) return refs.begin()->second;
  if (refs.empty()) return Status::NotFound("HEAD names no commit: the store has no branch yet");
  return Status::NotFound("HEAD is ambiguous: the store has " + std::to_string(refs.size()) +
                          " branches and none is named '" + kDefaultBranch + "'; name a branch instead");
}

Result<Hash> ResolveBase(Store& store, std::string_view base) {
  if (IsValidRefName(base)) {
    STRATA_ASSIGN_OR_RETURN(auto ref, store.GetRef(std::string(base)));
    if (ref) return *ref;
  }
  if (base == kHead) return DefaultHead(store);
  if (IsHex(base) && base.size() < kMinCommitPrefix)
    return Status::NotFound("unknown revision '" + std::string(base) + "': not a branch, and a commit id prefix needs " +
                            std::to_string(kMinCommitPrefix) + " hex digits at least");
  if (IsHex(base) && base.size() <= Hash::kSize * 2) {
    STRATA_ASSIGN_OR_RETURN(auto matches, store.FindCommitsByPrefix(Lower(base), 2));
    if (matches.size() == 1) return matches[0];
    if (matches.size() > 1) return Status::InvalidArgument("revision '" + std::string(base) + "' is ambiguous: " +
                                                           "more than one commit id starts with it");
  }
  return Status::NotFound("unknown revision '" + std::string(base) + "' (not a branch or a commit id)");
}
}  // namespace

Result<Hash> ResolveRevision(Store& store, std::string_view rev) {
  if (rev.empty()) return Status::InvalidArgument("empty revision");
  size_t tilde = rev.find('~');
  std::string_view base = rev.substr(0, tilde);
  uint64_t back = 0;
  if (tilde != std::string_view::npos) {
    std::string_view num = rev.substr(tilde + 1);
    if (num.empty()) {
      back = 1;  // "main~" is "main~1", as in git
    } else {
      auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), back);
      if (ec != std::errc() || end != num.data() + num.size())
        return Status::InvalidArgument("bad revision '" + std::string(rev) + "': expected NAME~N");
    }
  }
  STRATA_ASSIGN_OR_RETURN(Hash id, ResolveBase(store, base));
  for (uint64_t i = 0; i < back; i++) {
    STRATA_ASSIGN_OR_RETURN(Commit c, store.GetCommit(id));
    if (c.parents.empty())
      return Status::NotFound("revision '" + std::string(rev) + "' goes back past the first commit (" +
                              std::to_string(i) + (i == 1 ? " commit" : " commits") + " before '" +
                              std::string(base) + "')");
    id = c.parents[0];
  }
  return id;
}

std::optional<RevRange> SplitRevRange(std::string_view spec) {
  size_t dots = spec.find("..");
  if (dots == std::string_view::npos || spec.substr(0, dots).find(':') != std::string_view::npos) return std::nullopt;
  std::string from(spec.substr(0, dots)), to(spec.substr(dots + 2));
  return RevRange{from.empty() ? std::string(kHead) : from, to.empty() ? std::string(kHead) : to};
}

RevPath SplitRevPath(std::string_view spec) {
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return {std::string(spec), ""};
  return {std::string(spec.substr(0, colon)), std::string(spec.substr(colon + 1))};
}

Result<std::vector<std::string>> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view name = path.substr(start, slash - start);
    if (!name.empty() && name != ".") {
      if (!IsValidEntryName(name))
        return Status::InvalidArgument("invalid path '" + std::string(path) + "': bad component '" +
                                       std::string(name.substr(0, 64)) + "'");
      parts.emplace_back(name);
    }
    start = slash + 1;
  }
  return parts;
}

Result<TreeEntry> LookupPath(Store& store, const Hash& root, std::string_view path) {
  STRATA_ASSIGN_OR_RETURN(auto parts, SplitPath(path));
  TreeEntry current;
  current.kind = EntryKind::kDirectory;
  current.subtree = root;
  current.mode = 0755;
  std::string walked;
  for (const std::string& name : parts) {
    if (current.kind != EntryKind::kDirectory)
      return Status::InvalidArgument("'" + walked + "' is not a directory");
    STRATA_ASSIGN_OR_RETURN(Tree tree, store.GetTree(current.subtree));
    walked += (walked.empty() ? "" : "/") + name;
    const TreeEntry* e = tree.Find(name);
    if (e == nullptr) return Status::NotFound("'" + walked + "' does not exist in this commit");
    current = *e;
  }
  return current;
}

Result<Hash> ResolveContentRevision(Store& store, std::string_view rev) {
  STRATA_ASSIGN_OR_RETURN(Hash id, ResolveRevision(store, rev));
  STRATA_RETURN_IF_ERROR(CheckNotForgotten(store, id));
  return id;
}

}  // namespace strata
