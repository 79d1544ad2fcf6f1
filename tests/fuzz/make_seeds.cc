// make_seeds DIR: writes the seed corpus of every fuzz target under
// DIR/<target>/, from the project's own encoders, so the fuzzers start from
// valid inputs and mutate from there. Run by scripts/fuzz.sh --seeds; the
// output is kept in tests/fuzz/corpus/.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "store/codec.h"
#include "store/commit.h"
#include "store/object.h"
#include "store/pack_writer.h"
#include "store/store.h"
#include "store/tree.h"
#include "util/hash.h"
#include "workspace/file_data.h"

namespace {

void Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

strata::Tree SampleTree() {
  strata::Tree t;
  strata::TreeEntry dir;
  dir.name = "dir";
  dir.kind = strata::EntryKind::kDirectory;
  dir.mode = 0755;
  dir.subtree = strata::Sha256::Of("sub", 3);
  strata::TreeEntry file;
  file.name = "file.txt";
  file.kind = strata::EntryKind::kFile;
  file.mode = 0644;
  file.uid = 1000;
  file.mtime_sec = 1700000000;
  file.mtime_nsec = 5;
  file.xattrs = {{"user.a", "1"}, {"user.b", std::string("\0\1", 2)}};
  file.chunks = {{strata::Sha256::Of("a", 1), 100}, {strata::Sha256::Of("b", 1), 23}};
  file.size = 123;
  strata::TreeEntry link;
  link.name = "link";
  link.kind = strata::EntryKind::kSymlink;
  link.mode = 0777;
  link.target = "file.txt";
  strata::TreeEntry hard;
  hard.name = "zhard";
  hard.kind = strata::EntryKind::kHardlink;
  hard.target = "file.txt";
  strata::TreeEntry dev;
  dev.name = "null";
  dev.kind = strata::EntryKind::kCharDevice;
  dev.mode = 0666;
  dev.rdev = 0x103;
  t.entries = {dir, file, link, dev, hard};
  return t;
}

// A pack of two objects (one compressible, one not), written by PackWriter.
std::string SamplePack(const std::string& scratch) {
  std::filesystem::create_directories(scratch);
  auto writer = strata::PackWriter::Create(strata::Env::Default(), scratch);
  if (!writer.ok()) std::exit(1);
  for (const std::string& raw : {std::string(5000, 'x'), std::string("incompressible?")}) {
    std::string stored;
    strata::Codec codec = strata::Compress(raw, 3, &stored);
    auto id = strata::ComputeObjectId(strata::ObjectType::kChunk, raw);
    if (!(*writer)->Add(id, strata::ObjectType::kChunk, codec, stored, raw.size()).ok()) std::exit(1);
  }
  auto sealed = (*writer)->Finish();
  if (!sealed.ok()) std::exit(1);
  auto bytes = strata::Env::Default()->ReadFile(sealed->local_path);
  std::filesystem::remove_all(scratch);
  if (!bytes.ok()) std::exit(1);
  return *bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  Write(dir + "/tree", "sample", strata::EncodeTree(SampleTree()));
  Write(dir + "/tree", "empty", strata::EncodeTree(strata::Tree()));
  strata::Commit c;
  c.root = strata::Sha256::Of("root", 4);
  c.parents = {strata::Sha256::Of("p1", 2), strata::Sha256::Of("p2", 2)};
  c.author = "someone@host";
  c.time_ns = 1700000000123456789;
  c.message = "a message\nwith two lines";
  c.root_meta.xattrs = {{"user.x", "y"}};
  Write(dir + "/commit", "merge", strata::EncodeCommit(c));
  Write(dir + "/commit", "first", strata::EncodeCommit(strata::Commit()));
  Write(dir + "/pack", "two-objects", SamplePack(dir + "/.scratch"));
  Write(dir + "/config", "default", strata::StoreConfig().ToJson());
  namespace wi = strata::workspace_internal;
  Write(dir + "/chunk_list", "two", wi::EncodeChunkList({{strata::Sha256::Of("a", 1), 7}, {strata::Sha256::Of("b", 1), 1 << 20}}));
  Write(dir + "/chunk_list", "none", wi::EncodeChunkList({}));
  return 0;
}
