// What a workspace reads back from its database (workspace.db), as SQLite
// hands it over: inode rows, extents, id columns, and the meta values
// "next_ino", "base"/"base_root" and "committing" (the recovery record of a
// commit in flight). The first byte picks the decoder. Whatever is accepted
// must encode to a value that decodes to the same thing (to the same stored
// form, for rows), and keep the invariants the workspace relies on.

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_input.h"
#include "store/store.h"
#include "workspace/namespace_db.h"

namespace {

namespace wi = strata::workspace_internal;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

void InodeRow(strata::fuzz::FuzzInputReader& in) {
  wi::InodeColumns c;
  c.ino = in.Int();
  c.mode = in.Int();
  c.uid = in.Int();
  c.gid = in.Int();
  c.size = in.Int();
  c.rdev = in.Int();
  c.atime_ns = in.Int();
  c.mtime_ns = in.Int();
  c.ctime_ns = in.Int();
  c.nlink = in.Int();
  c.base_len = in.Int();
  c.changed = in.Int();
  c.next_cookie = in.Int();
  c.parent = in.Int();
  if ((in.Byte() & 1)) c.base_tree = in.String();
  c.target = in.Rest();
  auto row = wi::DecodeInodeRow(c);
  if (!row.ok()) return;
  if (wi::EncodeInodeRow(*row) != c) Fail("a decoded inode row encodes to another row");
  if (row->base_len > row->size || row->ino == 0) Fail("an accepted inode row breaks an invariant");
}

void ExtentRow(strata::fuzz::FuzzInputReader& in) {
  const int64_t start = in.Int(), end = in.Int();
  auto e = wi::DecodeExtentRow(start, end);
  if (!e.ok()) return;
  if (e->start >= e->end || static_cast<int64_t>(e->start) != start || static_cast<int64_t>(e->end) != end)
    Fail("an accepted extent is empty or another one");
}

void IdColumn(strata::fuzz::FuzzInputReader& in) {
  const std::string blob = in.Rest();
  auto id = wi::DecodeIdBlob(blob, "id");
  if (!id.ok()) return;
  if (std::string(reinterpret_cast<const char*>(id->bytes.data()), strata::Hash::kSize) != blob)
    Fail("an id column decodes to other bytes");
}

void InodeCounter(strata::fuzz::FuzzInputReader& in) {
  const std::string value = in.Rest();
  auto n = wi::DecodeInodeCounter(value);
  if (!n.ok()) return;
  if (*n <= strata::kRootInode) Fail("an accepted inode counter hands out the root");
  if (wi::EncodeInodeCounter(*n) != value) Fail("an inode counter has two spellings");
}

void MetaId(strata::fuzz::FuzzInputReader& in) {
  const std::string value = in.Rest();
  auto id = wi::DecodeMetaId(value, "id");
  if (!id.ok()) return;
  auto again = wi::DecodeMetaId(wi::EncodeMetaId(*id), "id");
  if (!again.ok() || *again != *id) Fail("a meta id does not survive encoding");
}

void Committing(strata::fuzz::FuzzInputReader& in) {
  const std::string value = in.Rest();
  auto record = wi::DecodeCommittingRecord(value);
  if (!record.ok()) return;
  if (*record && !strata::IsValidRefName((*record)->branch)) Fail("a 'committing' record with a bad branch");
  auto again = wi::DecodeCommittingRecord(wi::EncodeCommittingRecord(*record));
  if (!again.ok() || *again != *record) Fail("a 'committing' record does not survive encoding");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::FuzzInputReader in(data, size);
  switch (in.Byte() % 6) {
    case 0: InodeRow(in); break;
    case 1: ExtentRow(in); break;
    case 2: IdColumn(in); break;
    case 3: InodeCounter(in); break;
    case 4: MetaId(in); break;
    default: Committing(in); break;
  }
  return 0;
}
