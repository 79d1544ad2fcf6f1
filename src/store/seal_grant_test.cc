// Key generations shared between stores with one master key (store.h,
// docs/format/encryption.md "Nonces across stores"): a store made with
// another's key seals nothing until it adopts a granted range; then it seals
// under that range only, and the grantor never seals under what it granted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "store/index.h"
#include "store/store.h"
#include "store/store_cipher.h"
#include "store/store_test_fixture.h"

namespace strata {
namespace {

constexpr crypto::ScryptParams kFastScrypt{10, 8, 1};
constexpr const char* kPassphrase = "correct horse battery staple";

std::unique_ptr<Store> OpenWith(const std::string& path) {
  auto master = Store::Unlock(path, kPassphrase);
  EXPECT_TRUE(master.ok()) << master.status().ToString();
  auto s = Store::Open(path, Env::Default(), &*master);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

// The generations named by the sealed objects of a store's packs.
std::set<uint32_t> GenerationsSealed(Store& store, const std::vector<Hash>& ids) {
  std::set<uint32_t> seen;
  for (const Hash& id : ids) {
    auto loc = store.index()->Lookup(id);
    EXPECT_TRUE(loc.ok() && loc->has_value());
    std::ifstream in(store.path() + "/packs/" + (*loc)->pack, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto g = store.cipher()->SealedGeneration(std::string_view(bytes).substr((*loc)->entry.offset,
                                                                             (*loc)->entry.stored_len));
    EXPECT_TRUE(g.ok());
    seen.insert(*g);
  }
  return seen;
}

std::vector<Hash> PutChunks(Store& store, const std::string& tag, int n) {
  std::vector<Hash> ids;
  for (int i = 0; i < n; i++) {
    auto put = store.Put(ObjectType::kChunk, tag + " " + std::to_string(i));
    EXPECT_TRUE(put.ok()) << put.status().ToString();
    if (put.ok()) ids.push_back(put->id);
  }
  EXPECT_TRUE(store.Flush().ok());
  return ids;
}

// Two stores of one master key and the smallest seal limit: `a` made it
// (and owns every generation), `b` was made with it and owns none.
struct TwoStores {
  testing::TempDir dir;
  std::unique_ptr<Store> a, b;
};
void MakeTwoStores(TwoStores* t) {
  const std::string first = t->dir.path() + "/first", second = t->dir.path() + "/second";
  StoreConfig limited;
  limited.seal_limit = StoreConfig::kMinSealLimit;
  ASSERT_TRUE(Store::InitEncrypted(first, limited, kPassphrase, kFastScrypt).ok());
  t->a = OpenWith(first);
  ASSERT_TRUE(t->a);
  auto master = Store::Unlock(first, kPassphrase);
  ASSERT_TRUE(master.ok());
  ASSERT_TRUE(Store::InitEncryptedWithKey(second, limited, kPassphrase, *master, kFastScrypt).ok());
  t->b = OpenWith(second);
  ASSERT_TRUE(t->b);
}

TEST(SealGrantTest, AStoreMadeWithAnotherKeySealsOnlyUnderTheRangeItWasGranted) {
  TwoStores t;
  ASSERT_NO_FATAL_FAILURE(MakeTwoStores(&t));
  Store* a = t.a.get();
  Store* b = t.b.get();

  // Before a grant it owns nothing and refuses to seal, saying why.
  auto early = b->Put(ObjectType::kChunk, "too early");
  ASSERT_FALSE(early.ok());
  EXPECT_TRUE(early.status().IsInvalidArgument());
  EXPECT_NE(early.status().message().find("owns no key generation"), std::string::npos) << early.status().message();

  auto grant = a->GrantSealGenerations(4);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  EXPECT_EQ(grant->end, uint64_t{1} << 32);
  EXPECT_EQ(grant->end - grant->first, 4u);
  ASSERT_TRUE(b->AdoptSealGenerations(*grant).ok());

  // 16 seals a generation: 40 seals of b use three of its four generations
  // (the third in part); past the fourth it stops instead of moving into
  // another store's.
  auto b_ids = PutChunks(*b, "b", 40);
  EXPECT_EQ(GenerationsSealed(*b, b_ids),
            (std::set<uint32_t>{static_cast<uint32_t>(grant->first), static_cast<uint32_t>(grant->first + 1),
                                static_cast<uint32_t>(grant->first + 2)}));
  // The rest of the third generation and all of the fourth: 24 more, then refused.
  for (int i = 0; i < 24; i++) ASSERT_TRUE(b->Put(ObjectType::kChunk, "b more " + std::to_string(i)).ok()) << i;
  auto past = b->Put(ObjectType::kChunk, "past the range");
  EXPECT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), Status::Code::kUnsupported) << past.status().ToString();
  ASSERT_TRUE(b->Flush().ok());
  // A store that has sealed cannot take another range.
  EXPECT_TRUE(b->AdoptSealGenerations(SealRange{100, 200}).IsInvalidArgument());

  // The grantor's range now ends below the grant; its own seals stay there.
  auto owned = a->OwnedSealGenerations();
  ASSERT_TRUE(owned.ok());
  EXPECT_EQ(owned->end, grant->first);
  auto a_ids = PutChunks(*a, "a", 20);
  for (uint32_t g : GenerationsSealed(*a, a_ids)) EXPECT_LT(g, grant->first);
  // One master key: the ids agree, and what b sealed opens in b.
  EXPECT_EQ(a->ObjectId(ObjectType::kChunk, "b 0"), b_ids[0]);
  auto read = b->Get(b_ids[39], ObjectType::kChunk);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, "b 39");
}

TEST(SealGrantTest, GrantsNeverOverlapAndStopWhenNothingIsLeft) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/store";
  ASSERT_TRUE(Store::InitEncrypted(path, StoreConfig(), kPassphrase, kFastScrypt).ok());
  auto a = OpenWith(path);
  ASSERT_TRUE(a);
  std::vector<SealRange> grants;
  for (;;) {
    auto g = a->GrantSealGenerations(uint64_t{1} << 40);  // as much as it may: half of what is left
    if (!g.ok()) {
      EXPECT_EQ(g.status().code(), Status::Code::kUnsupported) << g.status().ToString();
      break;
    }
    grants.push_back(*g);
    ASSERT_LT(grants.size(), 40u);
  }
  // Each takes half of what is left above the current generation: about 32 halvings of 2^32.
  EXPECT_GE(grants.size(), 30u);
  auto owned = a->OwnedSealGenerations();
  ASSERT_TRUE(owned.ok());
  EXPECT_LE(owned->end - owned->first, 2u);  // the current generation, and at most one more
  for (size_t i = 0; i < grants.size(); i++) {
    EXPECT_LT(grants[i].first, grants[i].end);
    EXPECT_LE(owned->end, grants[i].first) << i;
    for (size_t j = i + 1; j < grants.size(); j++)
      EXPECT_TRUE(grants[j].end <= grants[i].first || grants[i].end <= grants[j].first) << i << " " << j;
  }
  // The store still seals under what it kept.
  EXPECT_EQ(PutChunks(*a, "kept", 3).size(), 3u);
}

TEST(SealGrantTest, AStoreThatUsedUpItsRangeTakesMoreFromItsSourceAndStopsWhenItFails) {
  TwoStores t;
  ASSERT_NO_FATAL_FAILURE(MakeTwoStores(&t));
  Store* a = t.a.get();
  Store* b = t.b.get();
  auto grant = a->GrantSealGenerations(1);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  ASSERT_TRUE(b->AdoptSealGenerations(*grant).ok());

  // The source stands where a bucket's claim would: grants of the first
  // store, two of one generation each, then a failure.
  std::vector<SealRange> given;
  int asked = 0;
  b->SetSealGenerationSource([&]() -> Result<SealRange> {
    asked++;
    if (given.size() == 2) return Status::Unsupported("nothing left to give");
    auto more = a->GrantSealGenerations(1);
    if (more.ok()) given.push_back(*more);
    return more;
  });
  // 16 seals under the adopted generation, 16 under each of the two given.
  auto ids = PutChunks(*b, "b", 48);
  ASSERT_EQ(given.size(), 2u);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(GenerationsSealed(*b, ids),
            (std::set<uint32_t>{static_cast<uint32_t>(grant->first), static_cast<uint32_t>(given[0].first),
                                static_cast<uint32_t>(given[1].first)}));
  auto owned = b->OwnedSealGenerations();
  ASSERT_TRUE(owned.ok());
  EXPECT_EQ(owned->first, given[1].first);
  EXPECT_EQ(owned->end, given[1].end);
  // The source fails: the seal is refused, saying both why and what failed.
  auto past = b->Put(ObjectType::kChunk, "past every range");
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("claiming more key generations failed (nothing left to give)"),
            std::string::npos)
      << past.status().message();
  EXPECT_EQ(asked, 3);
  ASSERT_TRUE(b->Flush().ok());
  // What it sealed reads back under every generation it used.
  for (int i : {0, 20, 47}) {
    auto read = b->Get(ids[i], ObjectType::kChunk);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(*read, "b " + std::to_string(i));
  }
}

TEST(SealGrantTest, ExtendingARangeThatIsNotUsedUpChangesNothing) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/store";
  StoreConfig limited;
  limited.seal_limit = StoreConfig::kMinSealLimit;
  ASSERT_TRUE(Store::InitEncrypted(path, limited, kPassphrase, kFastScrypt).ok());
  auto a = OpenWith(path);
  ASSERT_TRUE(a);
  ASSERT_EQ(PutChunks(*a, "a", 3).size(), 3u);
  // Another process of the store claimed first: this claim is left unused.
  auto extended = a->index()->ExtendSeals("seal_generation", "sealed_objects", "seal_generations_given",
                                          SealRange{100, 200}, limited.seal_limit, UINT32_MAX);
  ASSERT_TRUE(extended.ok()) << extended.status().ToString();
  EXPECT_FALSE(*extended);
  auto owned = a->OwnedSealGenerations();
  ASSERT_TRUE(owned.ok());
  EXPECT_EQ(owned->first, 0u);
  EXPECT_EQ(owned->end, uint64_t{1} << 32);
}

}  // namespace
}  // namespace strata
