// make_seeds DIR: writes the seed corpus of every fuzz target under
// DIR/<target>/, from the project's own encoders, so the fuzzers start from
// valid inputs and mutate from there. Run by scripts/fuzz.sh --seeds; the
// output is kept in tests/fuzz/corpus/.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "control/protocol.h"
#include "crypto/key_file.h"
#include "crypto/master_key_file.h"
#include "fs/kernel/request_encoder.h"
#include "fuzz_input.h"
#include "remote/remote.h"
#include "remote/remote_spec_seal.h"
#include "remote/s3_backend.h"
#include "remote/s3_xml.h"
#include "store/codec.h"
#include "store/index.h"
#include "store/commit.h"
#include "store/frame_format.h"
#include "store/object.h"
#include "store/pack_writer.h"
#include "store/store.h"
#include "store/store_cipher.h"
#include "store/tree.h"
#include "util/hash.h"
#include "workspace/file_data.h"
#include "workspace/posix_acl.h"
#include "workspace/namespace_db.h"

namespace {

namespace control = strata::control;

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

// A pack written by PackWriter: two objects stored whole (one compressible,
// one not, as pack format 1 stored every object), and two framed ones as
// Store::Put stores them (frames of 4 KiB, so that there are several).
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
  std::string mixed(6000, 'y');
  for (int i = 0; i < 6000; i++) mixed.push_back(static_cast<char>((i * 7919) % 251));
  for (const std::string& raw : {mixed, std::string("tiny")}) {
    std::string stored;
    auto id = strata::ComputeObjectId(strata::ObjectType::kChunk, raw);
    strata::EncodeFramed(id, raw, 3, strata::kMinFrameShift, &stored);
    if (!(*writer)->Add(id, strata::ObjectType::kChunk, strata::Codec::kFramed, stored, raw.size()).ok()) std::exit(1);
  }
  auto sealed = (*writer)->Finish();
  if (!sealed.ok()) std::exit(1);
  auto bytes = strata::Env::Default()->ReadFile(sealed->local_path);
  std::filesystem::remove_all(scratch);
  if (!bytes.ok()) std::exit(1);
  return *bytes;
}

using strata::fuzz::FuzzInputWriter;

void IndexRowSeeds(const std::string& dir) {
  strata::PackEntry e;
  e.id = strata::Sha256::Of("x", 1);
  e.type = strata::ObjectType::kTree;
  e.codec = strata::Codec::kZstd;
  e.offset = strata::kPackHeaderSize;
  e.stored_len = 300;
  e.raw_len = 1000;
  const strata::IndexObjectRow row = strata::EncodeIndexObjectRow(e);
  Write(dir, "object", FuzzInputWriter(0).String(row.oid).Int(row.offset).Int(row.stored_len).Int(row.raw_len)
                           .Int(row.type).Int(row.codec).bytes());
  const std::string pack = strata::Sha256::Of("p", 1).ToHex() + strata::kPackSuffix;
  Write(dir, "pack", FuzzInputWriter(1).Int(4096).Rest(pack).bytes());
  Write(dir, "ref", FuzzInputWriter(2).String(row.oid).Rest("feature/x").bytes());
}

void WorkspaceRowSeeds(const std::string& dir) {
  namespace wi = strata::workspace_internal;
  wi::InodeRow file;
  file.ino = 7;
  file.mode = 0100644;
  file.uid = file.gid = 1000;
  file.size = 5000;
  file.base_len = 4096;
  file.mtime_ns = 1700000000123456789;
  file.nlink = 1;
  file.parent = 1;
  wi::InodeRow dir_row;
  dir_row.ino = 1;
  dir_row.mode = 040755;
  dir_row.nlink = 2;
  dir_row.base_tree = strata::Sha256::Of("t", 1);
  dir_row.next_cookie = 3;
  dir_row.parent = 1;
  dir_row.changed = true;
  wi::InodeRow link;
  link.ino = 9;
  link.mode = 0120777;
  link.target = "../somewhere";
  link.nlink = 1;
  for (const auto& [name, row] : {std::pair{"file", file}, std::pair{"dir", dir_row}, std::pair{"symlink", link}}) {
    const wi::InodeColumns c = wi::EncodeInodeRow(row);
    FuzzInputWriter w(0);
    w.Int(c.ino).Int(c.mode).Int(c.uid).Int(c.gid).Int(c.size).Int(c.rdev).Int(c.atime_ns).Int(c.mtime_ns);
    w.Int(c.ctime_ns).Int(c.nlink).Int(c.base_len).Int(c.changed).Int(c.next_cookie).Int(c.parent);
    if (c.base_tree) {
      w.Byte(1).String(*c.base_tree);
    } else {
      w.Byte(0);
    }
    Write(dir, std::string("inode-") + name, w.Rest(c.target).bytes());
  }
  Write(dir, "extent", FuzzInputWriter(1).Int(4096).Int(8192).bytes());
  const strata::Hash id = strata::Sha256::Of("c", 1);
  Write(dir, "tree-id", FuzzInputWriter(2).Rest(std::string(reinterpret_cast<const char*>(id.bytes.data()), 32)).bytes());
  Write(dir, "next-ino", FuzzInputWriter(3).Rest(wi::EncodeInodeCounter(12345)).bytes());
  Write(dir, "base", FuzzInputWriter(4).Rest(wi::EncodeMetaId(id)).bytes());
  Write(dir, "base-none", FuzzInputWriter(4).Rest(wi::EncodeMetaId(std::nullopt)).bytes());
  Write(dir, "committing", FuzzInputWriter(5).Rest(wi::EncodeCommittingRecord(wi::CommittingRecord{id, "team/main"})).bytes());
  Write(dir, "committing-none", FuzzInputWriter(5).Rest(wi::EncodeCommittingRecord(std::nullopt)).bytes());
}

void ControlSeeds(const std::string& dir) {
  const strata::Hash id = strata::Sha256::Of("c", 1);
  const std::pair<const char*, control::DaemonRequest> requests[] = {
      {"stats", control::StatsRequest{}},
      {"commit", strata::CommitRequest{"a message\nof two lines", "someone@host", "main"}},
      {"snapshot", control::SnapshotRequest{}},
      {"reset", strata::ResetRequest{id, true}},
      {"rebase", control::RebaseRequest{id, {{"a/f1", strata::ConflictChoice::kBoth}}}}};
  for (const auto& [name, r] : requests)
    Write(dir, std::string("request-") + name, FuzzInputWriter(0).Rest(control::EncodeRequest(r)).bytes());
  // Replies: selector 1 + the request's place in stats, commit, snapshot, reset, rebase.
  auto reply = [&](uint8_t selector, const char* name, const strata::Result<control::DaemonReply>& r) {
    Write(dir, std::string("reply-") + name, FuzzInputWriter(selector).Rest(control::EncodeReply(r)).bytes());
  };
  control::StatsReply stats;
  stats.operations = {{"lookup", 3, 0, {{32, 3}}}, {"write", 1, 1, {{1, 0}, {1024, 1}}}};
  stats.workspace.changed_paths = 3;
  stats.workspace.read_path.store.backend = {{"cache_misses", 2}, {"fetched_bytes", 100}, {"cache_hits", 1},
                                             {"cache_waits", 0}, {"cached_bytes", 100}, {"cache_evictions", 0}};
  stats.request_loop = {4, 1, 2, 3};
  reply(1, "stats", control::DaemonReply(stats));
  strata::CommitOutcome outcome{id, "main", {}};
  outcome.stats.cut_ms = 1.5;
  reply(2, "commit", control::DaemonReply(outcome));
  reply(2, "commit-nothing", control::DaemonReply(strata::CommitOutcome{}));
  strata::WorkspaceSnapshot snap;
  snap.base = id;
  snap.root = strata::Sha256::Of("r", 1);
  snap.root_meta.xattrs = {{"user.a", std::string("\0\xff", 2)}};
  reply(3, "snapshot", control::DaemonReply(snap));
  reply(4, "reset", control::DaemonReply(control::ResetReply{id, true, false}));
  strata::RebaseOutcome rebase;
  rebase.conflicts = {{"a/b", "changed on both sides"}};
  reply(5, "rebase", control::DaemonReply(control::RebaseReplyOf(id, rebase)));
  reply(2, "error", strata::Status::Conflict("head moved"));
}

void RemoteSeeds(const std::string& dir) {
  Write(dir, "ref", FuzzInputWriter(0).Rest(strata::EncodeRemoteRef(strata::Sha256::Of("c", 1))).bytes());
  Write(dir, "ref-deleted", FuzzInputWriter(0).Rest(strata::EncodeRemoteRef(std::nullopt)).bytes());
  strata::RemoteSpec spec;
  spec.name = "origin";
  auto location = strata::S3Location::FromUrl("s3://bucket/team/store", "http://127.0.0.1:7480");
  if (!location.ok()) std::exit(1);
  spec.location = *location;
  Write(dir, "remote-json", FuzzInputWriter(1).Rest(strata::RemoteSpecToJson(spec)).bytes());
  strata::crypto::Key256 key;  // the fuzz target's fixed key
  key.bytes.fill(7);
  spec.name = "fuzz";
  auto sealed = strata::SealRemoteSpec(key, spec);
  if (!sealed.ok()) std::exit(1);
  Write(dir, "remote-sealed", FuzzInputWriter(7).Rest(*sealed).bytes());
  // S3 answers are written by the server, not by strata: these follow RGW's.
  Write(dir, "list-page", FuzzInputWriter(2).Rest(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>bucket</Name><Prefix>team/store/packs/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="
      "</NextContinuationToken><Contents><Key>team/store/packs/a&amp;b.pack</Key>"
      "<LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag>"
      "<Size>4096</Size><StorageClass>STANDARD</StorageClass></Contents><Contents><Key>team/store/refs/main</Key>"
      "<Size>65</Size><ETag>\"e\"</ETag></Contents></ListBucketResult>").bytes());
  Write(dir, "error", FuzzInputWriter(3).Rest(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchKey</Code><Message>no &lt;key&gt; &#x263A;"
      "</Message><BucketName>bucket</BucketName><RequestId>tx0</RequestId></Error>").bytes());
  Write(dir, "delete-result", FuzzInputWriter(8).Rest(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Deleted><Key>team/store/packs/a.pack</Key></Deleted><Error><Key>team/store/packs/b&amp;c.pack</Key>"
      "<Code>AccessDenied</Code><Message>Access Denied</Message></Error></DeleteResult>").bytes());
  // Header lines as libcurl hands them over, CRLF included.
  Write(dir, "header-status", FuzzInputWriter(4).Rest("HTTP/1.1 200 OK\r\n").bytes());
  Write(dir, "header-etag", FuzzInputWriter(4).Rest("ETag: \"9b2cf535f27731c974343645a3985328-2\"\r\n").bytes());
  Write(dir, "header-length", FuzzInputWriter(4).Rest("Content-Length: 1048576\r\n").bytes());
  Write(dir, "header-other", FuzzInputWriter(4).Rest("x-amz-request-id: tx000000000000000000001\r\n").bytes());
  // Listed keys, relative to the location's prefix.
  std::string pack = strata::Sha256::Of("p", 1).ToHex() + strata::kPackSuffix;
  Write(dir, "key-pack", FuzzInputWriter(5).Rest(strata::s3::kPacksFolder + pack).bytes());
  Write(dir, "key-ref", FuzzInputWriter(5).Rest(std::string(strata::s3::kRefsFolder) + "team/main").bytes());
}

}  // namespace

// A key file with cheap scrypt parameters whose passphrase is the one
// fuzz_key_file tries, so mutations reach the unwrap as well as the decoder.
// Wrapping draws a fresh salt and id, so a seed that still unwraps to the
// same key is kept: regenerating the corpus changes no file without cause.
void KeyFileSeeds(const std::string& dir) {
  strata::crypto::Key256 master;
  master.bytes.fill(0x42);
  std::ifstream in(dir + "/cheap", std::ios::binary);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (auto old = strata::crypto::DecodeKeyFile(kept, "cheap"); old.ok()) {
    auto key = strata::crypto::UnwrapMasterKey(*old, "fuzz");
    if (key.ok() && key->bytes == master.bytes) return;
  }
  auto file = strata::crypto::WrapMasterKey(master, "fuzz", strata::crypto::ScryptParams{10, 8, 1}, 1700000000);
  if (!file.ok()) std::abort();
  Write(dir, "cheap", strata::crypto::EncodeKeyFile(*file));
}

void MasterKeyFileSeeds(const std::string& dir) {
  strata::crypto::Key256 master;
  master.bytes.fill(0x42);
  Write(dir, "key", strata::crypto::EncodeMasterKeyFile(master));
}

// Every served opcode as a 7.44 kernel sends it, behind the selector byte
// of fuzz_fuse_request that matches the session it decodes in.
void FuseRequestSeeds(const std::string& dir) {
  for (const auto& s : strata::fs::kernel::SampleRequests()) {
    uint8_t selector = (s.options.minor != 0 ? 1 : 0) | (s.options.setxattr_ext ? 2 : 0);
    std::string bytes(1, static_cast<char>(selector));
    bytes.append(s.bytes.begin(), s.bytes.end());
    Write(dir, s.name, bytes);
  }
}

// Values sealed under fuzz_sealed's fixed key (so mutations start past the
// tag), and plaintexts for the selectors that seal first.
void SealedSeeds(const std::string& dir) {
  strata::crypto::Key256 master;
  master.bytes.fill(0x42);
  auto cipher = strata::StoreCipher::FromMasterKey(master);
  if (!cipher.ok()) std::abort();
  auto name = (*cipher)->SealRefName("team/main");
  strata::PackEntry entry{strata::Sha256::Of("fuzz", 4), strata::ObjectType::kChunk, strata::Codec::kSealed, 16, 0, 5};
  const std::string footer = strata::EncodePackFooter({entry});
  auto sealed_footer = (*cipher)->SealFooter(footer);
  std::string framed;
  strata::EncodeFramed(entry.id, "hello", 3, strata::kDefaultFrameShift, &framed);
  auto sealed_object = (*cipher)->SealObject(entry.id, entry.type, 5, framed);
  if (!name.ok() || !sealed_footer.ok() || !sealed_object.ok()) std::abort();
  Write(dir, "ref-name", FuzzInputWriter(0).Rest(*name).bytes());
  Write(dir, "footer", FuzzInputWriter(1).Rest(*sealed_footer).bytes());
  Write(dir, "object", FuzzInputWriter(2).Int(5).Rest(*sealed_object).bytes());
  Write(dir, "name-plain", FuzzInputWriter(3).Rest("team/main").bytes());
  Write(dir, "footer-plain", FuzzInputWriter(4).Rest(footer).bytes());
  Write(dir, "object-plain", FuzzInputWriter(5).Int(5).Rest(framed).bytes());
}

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
  Write(dir + "/pack", "whole-and-framed", SamplePack(dir + "/.scratch"));
  Write(dir + "/config", "default", strata::StoreConfig().ToJson());
  {
    strata::StoreConfig encrypted = strata::StoreConfig().Encrypted();
    encrypted.store_id = std::string(32, '1');
    encrypted.key_check = std::string(64, '2');
    Write(dir + "/config", "encrypted", encrypted.ToJson());
  }
  namespace wi = strata::workspace_internal;
  Write(dir + "/chunk_list", "two", wi::EncodeChunkList({{strata::Sha256::Of("a", 1), 7}, {strata::Sha256::Of("b", 1), 1 << 20}}));
  Write(dir + "/chunk_list", "none", wi::EncodeChunkList({}));
  {
    using strata::AclEntry;
    const uint32_t u = strata::kAclUndefinedId;
    strata::PosixAcl minimal{{AclEntry{strata::kAclUserObj, 6, u}, AclEntry{strata::kAclGroupObj, 4, u},
                              AclEntry{strata::kAclOther, 4, u}}};
    strata::PosixAcl named{{AclEntry{strata::kAclUserObj, 7, u}, AclEntry{strata::kAclUser, 5, 65534},
                            AclEntry{strata::kAclGroupObj, 5, u}, AclEntry{strata::kAclGroup, 7, 100},
                            AclEntry{strata::kAclMask, 5, u}, AclEntry{strata::kAclOther, 0, u}}};
    Write(dir + "/posix_acl", "minimal", minimal.Encode());
    Write(dir + "/posix_acl", "named", named.Encode());
  }
  IndexRowSeeds(dir + "/index_row");
  WorkspaceRowSeeds(dir + "/workspace_row");
  ControlSeeds(dir + "/control");
  RemoteSeeds(dir + "/remote");
  KeyFileSeeds(dir + "/key_file");
  MasterKeyFileSeeds(dir + "/master_key_file");
  FuseRequestSeeds(dir + "/fuse_request");
  SealedSeeds(dir + "/sealed");
  return 0;
}
