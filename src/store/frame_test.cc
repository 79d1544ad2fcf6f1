#include <gtest/gtest.h>

#include "store/backend.h"
#include "store/frame_format.h"
#include "store/object.h"
#include "store/pack_reader.h"
#include "store/pack_writer.h"
#include "store/store.h"
#include "store/store_test_fixture.h"
#include "store/verify.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

// Half text (zstd frames), half random bytes (raw frames).
std::string Mixed(size_t n, uint64_t seed) {
  std::string text;
  while (text.size() < n / 2) text += "line " + std::to_string(text.size()) + " of some text\n";
  text.resize(n / 2);
  return text + testing::RandomBytes(n - n / 2, seed);
}

std::string Framed(const std::string& data, unsigned shift = kDefaultFrameShift) {
  std::string out;
  EncodeFramed(ComputeObjectId(ObjectType::kChunk, data), data, 3, shift, &out);
  return out;
}

TEST(FrameFormatTest, EveryLengthAroundFrameEdgesRoundTrips) {
  const uint64_t f = uint64_t{1} << kMinFrameShift;
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, f - 1, f, f + 1, 3 * f, 3 * f + 7, 150 * f + 5}) {
    const std::string data = Mixed(n, n);
    const Hash id = ComputeObjectId(ObjectType::kChunk, data);
    const std::string stored = Framed(data, kMinFrameShift);
    std::string back(n, '\0');
    ASSERT_TRUE(DecodeFramedInto(id, stored, n, back.data()).ok()) << n;
    EXPECT_EQ(back, data) << n;
    uint64_t table_len = 0;
    auto table = DecodeFrameTable(id, stored, n, stored.size(), &table_len);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_EQ(table->frames.size(), (n + f - 1) / f);
    EXPECT_EQ(table->table_len, table_len);
  }
}

TEST(FrameFormatTest, TableNeedsMoreBytesWhenGivenAPrefix) {
  const std::string data = Mixed(600 << 10, 1);
  const Hash id = ComputeObjectId(ObjectType::kChunk, data);
  const std::string stored = Framed(data);
  uint64_t table_len = 0;
  auto partial = DecodeFrameTable(id, std::string_view(stored).substr(0, 20), data.size(), stored.size(), &table_len);
  ASSERT_TRUE(partial.status().IsNotFound()) << partial.status().ToString();
  ASSERT_GT(table_len, 20u);
  auto whole = DecodeFrameTable(id, std::string_view(stored).substr(0, table_len), data.size(), stored.size(),
                                &table_len);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->frames.size(), 10u);  // 600 KiB in 64 KiB frames
}

TEST(FrameFormatTest, EveryFlippedByteIsCaught) {
  const std::string data = Mixed(20000, 2);
  const Hash id = ComputeObjectId(ObjectType::kChunk, data);
  const std::string stored = Framed(data, kMinFrameShift);
  std::string out(data.size(), '\0');
  for (size_t i = 0; i < stored.size(); i++) {
    std::string bad = stored;
    bad[i] ^= 0x10;
    EXPECT_FALSE(DecodeFramedInto(id, bad, data.size(), out.data()).ok()) << "byte " << i;
  }
  // A table read for another object, or claimed for another length, is refused too.
  EXPECT_FALSE(DecodeFramedInto(ComputeObjectId(ObjectType::kTree, data), stored, data.size(), out.data()).ok());
  EXPECT_FALSE(DecodeFramedInto(id, stored, data.size() - 1, out.data()).ok());
  EXPECT_FALSE(DecodeFramedInto(id, stored.substr(0, stored.size() - 1), data.size(), out.data()).ok());
}

TEST(FrameFormatTest, FlippedFrameByteNamesTheFastCheck) {
  const std::string data = testing::RandomBytes(200000, 3);
  const Hash id = ComputeObjectId(ObjectType::kChunk, data);
  std::string stored = Framed(data);
  stored[stored.size() - 100] ^= 1;  // inside the last frame
  std::string out(data.size(), '\0');
  Status s = DecodeFramedInto(id, stored, data.size(), out.data());
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("frame 3 does not match its checksum (XXH3)"), std::string::npos) << s.ToString();
}

using FramedStoreTest = StoreTest;

TEST_F(FramedStoreTest, LocalReadsAreCheckedByXxh3AndFullReadsBySha256Too) {
  const std::string data = Mixed(300000, 4);
  const Hash id = store_->Put(ObjectType::kChunk, data)->id;
  ASSERT_TRUE(store_->Flush().ok());
  Reopen();
  ASSERT_EQ(*store_->Get(id, ObjectType::kChunk), data);
  StoreReadCounters fast = store_->ReadCounters();
  EXPECT_EQ(fast.frames_decoded, 5u);  // 300 000 bytes in 64 KiB frames
  EXPECT_GT(fast.fast_checked_bytes, 0u);
  EXPECT_EQ(fast.sha256_checked_bytes, 0u) << "a local pack is not hashed with SHA-256";

  store_->SetReadCheck(ReadCheck::kFull);
  ASSERT_EQ(store_->GetBuffer(id, ObjectType::kChunk)->view(), data);
  StoreReadCounters full = store_->ReadCounters();
  EXPECT_EQ(full.sha256_checked_bytes, data.size());
  EXPECT_EQ(full.fast_checked_bytes, 2 * fast.fast_checked_bytes);
}

TEST_F(FramedStoreTest, FlippedFrameByteIsCaughtByTheFastCheckAndByVerify) {
  const std::string a = Mixed(200000, 5), b = Mixed(200000, 6);
  const Hash ida = store_->Put(ObjectType::kChunk, a)->id;
  const Hash idb = store_->Put(ObjectType::kChunk, b)->id;
  ASSERT_TRUE(store_->Flush().ok());
  const std::string pack = OnlyPack();
  // b's last bytes sit just before the footer: flip one inside its last frame.
  auto file = Env::Default()->NewRandomAccessFile(pack);
  auto entries = ReadPackIndex(**file, nullptr);
  ASSERT_TRUE(entries.ok());
  const PackEntry& eb = (*entries)[1].id == idb ? (*entries)[1] : (*entries)[0];
  FlipByteAt(pack, eb.offset + eb.stored_len - 10);
  Reopen();
  EXPECT_EQ(*store_->Get(ida, ObjectType::kChunk), a);
  auto bad = store_->Get(idb, ObjectType::kChunk);
  ASSERT_TRUE(bad.status().IsCorruption());
  EXPECT_NE(bad.status().message().find(idb.ToHex()), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find(pack.substr(pack.rfind('/') + 1)), std::string::npos);
  EXPECT_NE(bad.status().message().find("XXH3"), std::string::npos);
  EXPECT_EQ(store_->ReadCounters().sha256_checked_bytes, 0u);

  const std::set<std::string> damaged = DamagedByVerify();
  EXPECT_TRUE(damaged.count(idb.ToHex()));
  EXPECT_FALSE(damaged.count(ida.ToHex()));
}

// Packs and refs as a local store keeps them, but not counted as this
// machine's own disk: how a remote's bytes (a bucket, its block cache) are read.
class NotLocalBackend : public Backend {
 public:
  explicit NotLocalBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  Status PublishPack(const std::string& local_path, const std::string& name) override {
    return inner_->PublishPack(local_path, name);
  }
  Result<std::shared_ptr<RandomAccessFile>> OpenPack(const std::string& name) override {
    return inner_->OpenPack(name);
  }
  Status DeletePack(const std::string& name) override { return inner_->DeletePack(name); }
  Result<std::vector<std::string>> ListPacks() override { return inner_->ListPacks(); }
  Result<std::optional<Hash>> GetRef(const std::string& name) override { return inner_->GetRef(name); }
  Result<std::map<std::string, Hash>> ListRefs() override { return inner_->ListRefs(); }
  Status CompareAndSwapRef(const std::string& name, const std::optional<Hash>& expected, const Hash& target) override {
    return inner_->CompareAndSwapRef(name, expected, target);
  }
  Status DeleteRef(const std::string& name, const Hash& expected) override { return inner_->DeleteRef(name, expected); }
  std::string PackLocation(const std::string& name) const override { return inner_->PackLocation(name); }

 private:
  std::unique_ptr<Backend> inner_;
};

// An object whose frames and table are well formed and whose checksums match,
// but whose bytes are not those of its id: what someone who can write the
// store's files could make. XXH3 cannot tell (docs/format/frames.md says so);
// SHA-256 can: verify, a copy to another store, a full-check mount, and every
// read from a remote refuse it.
TEST_F(FramedStoreTest, AForgedObjectFoolsTheFastCheckButNotSha256) {
  const std::string real = Mixed(100000, 9), forged = Mixed(100000, 10);
  const Hash id = ComputeObjectId(ObjectType::kChunk, real);
  {
    std::string stored;
    EncodeFramed(id, forged, 3, kDefaultFrameShift, &stored);  // framed and checksummed under the real id
    auto w = PackWriter::Create(Env::Default(), path_ + "/tmp");
    ASSERT_TRUE((*w)->Add(id, ObjectType::kChunk, Codec::kFramed, stored, forged.size()).ok());
    auto sealed = (*w)->Finish();
    ASSERT_TRUE(sealed.ok());
    ASSERT_TRUE(Env::Default()->Rename(sealed->local_path, path_ + "/packs/" + sealed->name).ok());
  }
  Reopen();
  EXPECT_EQ(*store_->Get(id, ObjectType::kChunk), forged) << "the documented limit of the fast check";
  EXPECT_TRUE(store_->GetStored(id).status().IsCorruption());
  auto report = VerifyStore(*store_, nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ok());
  store_->SetReadCheck(ReadCheck::kFull);
  auto full = store_->Get(id, ObjectType::kChunk);
  ASSERT_TRUE(full.status().IsCorruption());
  EXPECT_NE(full.status().message().find("SHA-256"), std::string::npos) << full.status().ToString();
  store_.reset();

  // The same pack read as a remote's: refused on the first read, whatever is asked.
  auto remote = Store::Open(path_, Env::Default(),
                            [](Env* env, const std::string& store_path, Index* index) -> Result<std::unique_ptr<Backend>> {
                              return std::unique_ptr<Backend>(
                                  new NotLocalBackend(NewLocalBackend(env, store_path, index)));
                            });
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  (*remote)->SetReadCheck(ReadCheck::kFast);
  EXPECT_EQ((*remote)->read_check(), ReadCheck::kFull);
  auto refused = (*remote)->GetBuffer(id, ObjectType::kChunk);
  ASSERT_TRUE(refused.status().IsCorruption());
  EXPECT_NE(refused.status().message().find(id.ToHex()), std::string::npos);
  EXPECT_TRUE((*remote)->GetRange(id, ObjectType::kChunk, 70000, 10).status().IsCorruption());
}

// A store as strata wrote it before frames (format version 1): a version 1
// pack of zstd and raw objects, and a config.json of version 1. It is read,
// each object checked by its id, and marked version 2 when opened.
TEST(OldFormatStoreTest, Version1StoreStillReadsWithSha256) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/store";
  StoreConfig old;
  old.version = 1;
  ASSERT_TRUE(Store::Init(path, old).ok());
  {
    // A version 1 config.json had no frame_size.
    std::string text = *Env::Default()->ReadFile(path + "/config.json");
    const std::string key = ",\n    \"frame_size\": 65536";
    ASSERT_NE(text.find(key), std::string::npos) << text;
    text.erase(text.find(key), key.size());
    ASSERT_NE(text.find("\"version\": 1,"), std::string::npos);
    ASSERT_TRUE(Env::Default()->WriteFileAtomically(path + "/config.json", text).ok());
  }
  const std::vector<std::string> objects = {std::string(100000, 'z'), testing::RandomBytes(70000, 7), "tiny"};
  std::vector<Hash> ids;
  std::string pack_name;
  {
    auto w = PackWriter::Create(Env::Default(), path + "/tmp", /*version=*/1);
    ASSERT_TRUE(w.ok());
    for (const std::string& o : objects) {
      std::string stored;
      const Codec codec = Compress(o, 3, &stored);
      ids.push_back(ComputeObjectId(ObjectType::kChunk, o));
      ASSERT_TRUE((*w)->Add(ids.back(), ObjectType::kChunk, codec, stored, o.size()).ok());
    }
    auto sealed = (*w)->Finish();
    ASSERT_TRUE(sealed.ok());
    pack_name = sealed->name;
    ASSERT_TRUE(Env::Default()->Rename(sealed->local_path, path + "/packs/" + sealed->name).ok());
  }
  auto store = Store::Open(path);  // indexes the pack from its footer
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  uint64_t total = 0;
  for (size_t i = 0; i < objects.size(); i++) {
    auto got = (*store)->Get(ids[i], ObjectType::kChunk);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, objects[i]);
    total += objects[i].size();
  }
  EXPECT_EQ((*store)->ReadCounters().sha256_checked_bytes, total) << "no frame checksums: the id is checked";
  EXPECT_EQ((*store)->ReadCounters().fast_checked_bytes, 0u);
  auto config = StoreConfig::FromJson(*Env::Default()->ReadFile(path + "/config.json"));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->version, 2) << "marked version 2, so that an older strata refuses it clearly";

  // New objects are framed, in a version 2 pack, beside the old one.
  const std::string fresh = Mixed(90000, 8);
  const Hash fresh_id = (*store)->Put(ObjectType::kChunk, fresh)->id;
  ASSERT_TRUE((*store)->Flush().ok());
  EXPECT_EQ(*(*store)->Get(fresh_id, ObjectType::kChunk), fresh);
  EXPECT_GT((*store)->ReadCounters().fast_checked_bytes, 0u);
  auto report = VerifyStore(**store, nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->packs, 2u);
}

}  // namespace
}  // namespace strata
