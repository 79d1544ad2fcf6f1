#include "store/store.h"

#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <thread>

#include "store/index.h"
#include "store/store_test_fixture.h"
#include "store/pack_writer.h"
#include "testing/store_test_util.h"
#include "store/verify.h"

namespace strata {
namespace {


TEST_F(StoreTest, PutFlushGetAcrossReopen) {
  std::string data = testing::RandomBytes(300000, 1);
  auto put = store_->Put(ObjectType::kChunk, data);
  ASSERT_TRUE(put.ok());
  EXPECT_TRUE(put->stored);
  ASSERT_TRUE(store_->Flush().ok());
  Reopen();
  auto got = store_->Get(put->id, ObjectType::kChunk);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, data);
  EXPECT_TRUE(store_->Get(put->id, ObjectType::kTree).status().IsCorruption());  // wrong type
  EXPECT_TRUE(store_->Get(Sha256::Of("x", 1), ObjectType::kChunk).status().IsNotFound());
}

TEST_F(StoreTest, GetOfUnflushedObjectWorks) {
  auto put = store_->Put(ObjectType::kChunk, "hello");
  auto got = store_->Get(put->id, ObjectType::kChunk);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "hello");
}

TEST_F(StoreTest, DuplicatePutsAreStoredOnce) {
  std::string data(200000, 'z');
  EXPECT_TRUE(store_->Put(ObjectType::kChunk, data)->stored);
  EXPECT_FALSE(store_->Put(ObjectType::kChunk, data)->stored);
  ASSERT_TRUE(store_->Flush().ok());
  Reopen();  // dedup also against what is already indexed
  EXPECT_FALSE(store_->Put(ObjectType::kChunk, data)->stored);
  // Same bytes, other type: another object.
  EXPECT_TRUE(store_->Put(ObjectType::kTree, std::string(1, '\1') + data)->stored);
  ASSERT_TRUE(store_->Flush().ok());
  auto stats = store_->Stats();
  EXPECT_EQ(stats->objects[static_cast<int>(ObjectType::kChunk)], 1u);
}

TEST_F(StoreTest, ConcurrentPutsOfOverlappingDataStoreEachObjectOnce) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([this] {
      for (int i = 0; i < 200; i++) ASSERT_TRUE(store_->Put(ObjectType::kChunk, "object " + std::to_string(i)).ok());
    });
  for (auto& t : threads) t.join();
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(store_->Stats()->objects[static_cast<int>(ObjectType::kChunk)], 200u);
  auto report = VerifyStore(*store_, nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->objects, 200u);
}

TEST_F(StoreTest, ObjectsCopiedAsStoredReadBackTheSame) {
  std::string text(300000, 'x');  // compressible: stored with zstd
  std::string noise = testing::RandomBytes(200000, 9);  // stored raw
  Hash t = store_->Put(ObjectType::kChunk, text)->id;
  Hash n = store_->Put(ObjectType::kChunk, noise)->id;
  ASSERT_TRUE(store_->Flush().ok());
  ASSERT_TRUE(Store::Init(dir_.path() + "/copy", StoreConfig()).ok());
  auto copy = std::move(Store::Open(dir_.path() + "/copy")).value();
  for (const Hash& id : {t, n}) {
    auto object = store_->GetStored(id);
    ASSERT_TRUE(object.ok()) << object.status().ToString();
    auto put = copy->PutStored(id, *object);
    ASSERT_TRUE(put.ok());
    EXPECT_TRUE(put->stored);
    EXPECT_FALSE(copy->PutStored(id, *object)->stored);  // once
  }
  EXPECT_LT(store_->GetStored(t)->bytes.size(), text.size());
  ASSERT_TRUE(copy->Flush().ok());
  EXPECT_EQ(*copy->Get(t, ObjectType::kChunk), text);
  EXPECT_EQ(*copy->Get(n, ObjectType::kChunk), noise);
  EXPECT_TRUE(store_->GetStored(Sha256::Of("absent", 6)).status().IsNotFound());
}

TEST_F(StoreTest, FlippedByteIsReportedByGetAndVerify) {
  std::string a = testing::RandomBytes(100000, 2), b = testing::RandomBytes(100000, 3);
  Hash ida = store_->Put(ObjectType::kChunk, a)->id;
  Hash idb = store_->Put(ObjectType::kChunk, b)->id;
  ASSERT_TRUE(store_->Flush().ok());
  std::string pack = OnlyPack();
  FlipByteAt(pack, 16 + 100000 + 50000, 0x40);  // object b follows a in the pack: a byte in its middle
  Reopen();
  EXPECT_TRUE(store_->Get(ida, ObjectType::kChunk).ok());
  auto bad = store_->Get(idb, ObjectType::kChunk);
  ASSERT_TRUE(bad.status().IsCorruption());
  EXPECT_NE(bad.status().message().find(idb.ToHex()), std::string::npos);
  // Copying as stored checks too: damaged bytes never reach another store.
  EXPECT_TRUE(store_->GetStored(ida).ok());
  EXPECT_TRUE(store_->GetStored(idb).status().IsCorruption());

  const std::set<std::string> damaged = DamagedByVerify();
  EXPECT_TRUE(damaged.count(idb.ToHex()));
  EXPECT_FALSE(damaged.count(ida.ToHex()));
}

TEST_F(StoreTest, RecoveryRemovesDeadTempPacksAndIndexesOrphanPacks) {
  // A temp pack of a process that no longer exists (pid 2^22+1 exceeds pid_max's default).
  std::string stale = path_ + "/tmp/4194305-0-1.tmp";
  {
    auto w = Env::Default()->NewWritableFile(stale);
    ASSERT_TRUE((*w)->Append("partial").ok() && (*w)->Close().ok());
  }
  // A sealed pack whose index rows were never written (crash after the rename).
  std::string data = "orphaned object";
  Hash id = ComputeObjectId(ObjectType::kChunk, data);
  {
    auto w = PackWriter::Create(Env::Default(), path_ + "/tmp");
    ASSERT_TRUE((*w)->Add(id, ObjectType::kChunk, Codec::kRaw, data, data.size()).ok());
    auto sealed = (*w)->Finish();
    ASSERT_TRUE(sealed.ok());
    ASSERT_TRUE(Env::Default()->Rename(sealed->local_path, path_ + "/packs/" + sealed->name).ok());
  }
  EXPECT_FALSE(*store_->Contains(id));
  Reopen();
  EXPECT_FALSE(Env::Default()->Exists(stale));
  EXPECT_TRUE(*store_->Contains(id));
  EXPECT_EQ(*store_->Get(id, ObjectType::kChunk), data);
}

TEST_F(StoreTest, RefsMoveOnlyByCompareAndSwap) {
  Commit c1;
  c1.message = "one";
  Hash h1 = store_->Put(ObjectType::kCommit, EncodeCommit(c1))->id;
  Commit c2 = c1;
  c2.parents = {h1};
  Hash h2 = store_->Put(ObjectType::kCommit, EncodeCommit(c2))->id;
  ASSERT_TRUE(store_->Flush().ok());

  ASSERT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, h1).ok());
  EXPECT_TRUE(store_->CompareAndSwapRef("main", std::nullopt, h2).IsConflict());  // exists already
  ASSERT_TRUE(store_->CompareAndSwapRef("main", h1, h2).ok());
  Status lost = store_->CompareAndSwapRef("main", h1, h1);  // stale expectation
  EXPECT_TRUE(lost.IsConflict());
  EXPECT_NE(lost.message().find("head moved"), std::string::npos);
  EXPECT_EQ(**store_->GetRef("main"), h2);
  // Only stored commits can be pointed at; names are checked.
  EXPECT_FALSE(store_->CompareAndSwapRef("other", std::nullopt, Sha256::Of("x", 1)).ok());
  EXPECT_EQ(store_->CompareAndSwapRef("a..b", std::nullopt, h1).code(), Status::Code::kInvalidArgument);
}

TEST_F(StoreTest, FlushAndSwapRefMakesObjectsDurableAndMovesTheRefOnlyFromItsValue) {
  Commit c1;
  c1.message = "one";
  Hash h1 = store_->Put(ObjectType::kCommit, EncodeCommit(c1))->id;
  store_->AddLogicalBytes(100);
  ASSERT_TRUE(store_->FlushAndSwapRef("main", std::nullopt, h1).ok());
  Commit c2 = c1;
  c2.parents = {h1};
  Hash h2 = store_->Put(ObjectType::kCommit, EncodeCommit(c2))->id;
  Hash chunk = store_->Put(ObjectType::kChunk, "data of the refused commit")->id;
  store_->AddLogicalBytes(20);
  // A stale expectation: the ref stays, but what was written is stored all the same.
  Status lost = store_->FlushAndSwapRef("main", h2, h2);
  EXPECT_TRUE(lost.IsConflict()) << lost.ToString();
  // Nothing stored: the ref may not point there.
  EXPECT_EQ(store_->FlushAndSwapRef("other", std::nullopt, Sha256::Of("x", 1)).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->FlushAndSwapRef("a..b", std::nullopt, h1).code(), Status::Code::kInvalidArgument);
  Reopen();  // from the index and packs alone
  EXPECT_EQ(**store_->GetRef("main"), h1);
  EXPECT_FALSE(store_->GetRef("other")->has_value());
  EXPECT_EQ(*store_->Get(chunk, ObjectType::kChunk), "data of the refused commit");
  EXPECT_EQ(store_->Stats()->logical_bytes, 120u);
  // A chunk is no commit to point at.
  EXPECT_EQ(store_->FlushAndSwapRef("main", h1, chunk).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(store_->FlushAndSwapRef("main", h1, h2).ok());  // already stored: nothing to seal
  Reopen();
  EXPECT_EQ(**store_->GetRef("main"), h2);
}

TEST_F(StoreTest, RefsAreDeletedOnlyFromTheirCurrentValue) {
  Commit c1;
  c1.message = "one";
  Hash h1 = store_->Put(ObjectType::kCommit, EncodeCommit(c1))->id;
  Commit c2 = c1;
  c2.parents = {h1};
  Hash h2 = store_->Put(ObjectType::kCommit, EncodeCommit(c2))->id;
  ASSERT_TRUE(store_->Flush().ok());
  ASSERT_TRUE(store_->CompareAndSwapRef("topic", std::nullopt, h2).ok());

  Status stale = store_->DeleteRef("topic", h1);  // it moved on to h2 meanwhile
  EXPECT_TRUE(stale.IsConflict());
  EXPECT_NE(stale.message().find("head moved"), std::string::npos);
  EXPECT_EQ(**store_->GetRef("topic"), h2);
  ASSERT_TRUE(store_->DeleteRef("topic", h2).ok());
  EXPECT_FALSE(store_->GetRef("topic")->has_value());
  EXPECT_TRUE(store_->ListRefs()->empty());
  EXPECT_TRUE(store_->DeleteRef("topic", h2).IsConflict());  // already gone
  EXPECT_EQ(store_->DeleteRef("-x", h2).code(), Status::Code::kInvalidArgument);
  // The commits stay; the name can be created again.
  EXPECT_TRUE(*store_->Contains(h2));
  EXPECT_TRUE(store_->CompareAndSwapRef("topic", std::nullopt, h1).ok());
}

TEST(StoreOpenTest, MissingStoreAndUnknownVersionAreClearErrors) {
  testing::TempDir dir;
  auto missing = Store::Open(dir.path() + "/nope");
  EXPECT_TRUE(missing.status().IsNotFound());
  EXPECT_NE(missing.status().message().find("strata init"), std::string::npos);

  std::string path = dir.path() + "/s";
  ASSERT_TRUE(Store::Init(path, StoreConfig()).ok());
  EXPECT_EQ(Store::Init(path, StoreConfig()).code(), Status::Code::kAlreadyExists);
  StoreConfig future;
  future.version = 999;
  ASSERT_TRUE(Env::Default()->WriteFileAtomically(path + "/config.json", future.ToJson()).ok());
  auto refused = Store::Open(path);
  EXPECT_EQ(refused.status().code(), Status::Code::kUnsupported);
  EXPECT_NE(refused.status().message().find("999"), std::string::npos);

  ASSERT_TRUE(Env::Default()->WriteFileAtomically(path + "/config.json", "{not json").ok());
  EXPECT_TRUE(Store::Open(path).status().IsCorruption());
}

// Found by fuzzing: fields of the wrong JSON type threw out of FromJson.
TEST(StoreConfigTest, WrongTypesAreCorruptionNotACrash) {
  for (const char* text : {R"({"format": {"a": 1}})", R"({"format": "strata-store", "version": "1"})", "[1, 2]",
                           R"({"format": "strata-store", "version": 1, "hash": "sha256", "chunker": 5})",
                           R"({"format": "strata-store", "version": 1e300})",
                           R"({"format": "strata-store", "version": -1})"}) {
    auto c = StoreConfig::FromJson(text);
    EXPECT_FALSE(c.ok()) << text;
    EXPECT_TRUE(c.status().IsCorruption()) << text << ": " << c.status().ToString();
  }
}

TEST(StoreConfigTest, JsonRoundTrip) {
  StoreConfig c;
  c.zstd_level = 7;
  auto back = StoreConfig::FromJson(c.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->zstd_level, 7);
  EXPECT_EQ(back->chunker.avg_size, c.chunker.avg_size);
}

// index.db is read through pure row decoders (tests/fuzz/fuzz_index_row.cc).
TEST(IndexRowTest, ObjectRowsRoundTripAndBadOnesAreCorruption) {
  PackEntry e;
  e.id = Sha256::Of("x", 1);
  e.type = ObjectType::kTree;
  e.codec = Codec::kZstd;
  e.offset = kPackHeaderSize;
  e.stored_len = 10;
  e.raw_len = 20;
  IndexObjectRow row = EncodeIndexObjectRow(e);
  auto back = DecodeIndexObjectRow(row);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(EncodeIndexObjectRow(*back), row);
  // A type of 257 once passed the check as the byte 1 (a chunk).
  for (auto mutate : std::vector<std::function<void(IndexObjectRow&)>>{
           [](IndexObjectRow& r) { r.type = 257; }, [](IndexObjectRow& r) { r.codec = -256; },
           [](IndexObjectRow& r) { r.offset = 0; }, [](IndexObjectRow& r) { r.stored_len = -1; },
           [](IndexObjectRow& r) { r.stored_len = INT64_MAX; }, [](IndexObjectRow& r) { r.raw_len = -5; },
           [](IndexObjectRow& r) { r.oid.pop_back(); }}) {
    IndexObjectRow bad = row;
    mutate(bad);
    EXPECT_TRUE(DecodeIndexObjectRow(bad).status().IsCorruption());
  }
}

TEST(IndexRowTest, PackNamesMustBeLowerCaseHexPackFiles) {
  const std::string hex = Sha256::Of("p", 1).ToHex();
  EXPECT_TRUE(DecodeIndexPackRow(hex + ".pack", 100).ok());
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& bad : {upper + ".pack", "../../" + hex.substr(6) + ".pack", hex, std::string()})
    EXPECT_TRUE(DecodeIndexPackRow(bad, 100).status().IsCorruption()) << bad;
  EXPECT_TRUE(DecodeIndexPackRow(hex + ".pack", -1).status().IsCorruption());
  EXPECT_TRUE(DecodeIndexRefRow("main", std::string(32, 'x')).ok());
  EXPECT_TRUE(DecodeIndexRefRow("../main", std::string(32, 'x')).status().IsCorruption());
  EXPECT_TRUE(DecodeIndexRefRow("main", std::string(31, 'x')).status().IsCorruption());
}

}  // namespace
}  // namespace strata
