// An encrypted store (store_cipher.h): unlocked only by its passphrase, its
// files holding none of the plaintext, its ids keyed, its sealed objects,
// footers and branch names checked on every read and by verify.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "store/index.h"
#include "store/store.h"
#include "store/store_cipher.h"
#include "store/store_test_fixture.h"
#include "util/hex.h"

namespace strata {
namespace {

// The smallest cost a key file accepts: unlocking takes milliseconds here.
constexpr crypto::ScryptParams kFastScrypt{10, 8, 1};
constexpr const char* kPassphrase = "correct horse battery staple";

class EncryptedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/store";
    ASSERT_TRUE(Store::InitEncrypted(path_, StoreConfig(), kPassphrase, kFastScrypt).ok());
    Reopen();
  }
  void Reopen() {
    store_.reset();
    auto master = Store::Unlock(path_, kPassphrase);
    ASSERT_TRUE(master.ok()) << master.status().ToString();
    auto s = Store::Open(path_, Env::Default(), &*master);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  // Every byte of every file in the store.
  std::string AllStoreBytes() {
    std::string all;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(path_)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      all.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return all;
  }
  PackEntry Located(const Hash& id, std::string* pack) {
    auto loc = store_->index()->Lookup(id);
    EXPECT_TRUE(loc.ok() && loc->has_value());
    *pack = path_ + "/packs/" + (*loc)->pack;
    return (*loc)->entry;
  }
  void Rewrite(const std::string& file, const std::string& data) {
    ASSERT_TRUE(Env::Default()->RemoveFile(file).ok());
    auto w = Env::Default()->NewWritableFile(file);
    ASSERT_TRUE((*w)->Append(data).ok() && (*w)->Close().ok());
  }
  std::set<std::string> DamagedByVerify() { return ObjectsDamagedByVerify(*store_); }
  Hash PutChunk(const std::string& data) {
    auto put = store_->Put(ObjectType::kChunk, data);
    EXPECT_TRUE(put.ok()) << put.status().ToString();
    EXPECT_TRUE(store_->Flush().ok());
    return put->id;
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(EncryptedStoreTest, ConfigSaysEncryptedAndTheKeyFileIsPrivate) {
  EXPECT_TRUE(store_->config().encrypted());
  EXPECT_EQ(store_->config().version, StoreConfig::kEncryptedFormatVersion);
  auto keys = Env::Default()->ListDir(Store::KeysDir(path_));
  ASSERT_TRUE(keys.ok());
  int key_files = 0;
  for (const std::string& name : *keys) {
    if (!name.ends_with(".key")) continue;
    key_files++;
    auto perms = std::filesystem::status(Store::KeysDir(path_) + "/" + name).permissions();
    EXPECT_EQ(perms & std::filesystem::perms::all, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
  EXPECT_EQ(key_files, 1);
}

TEST_F(EncryptedStoreTest, WrongPassphraseAndMissingKeyAreRefusedBeforeOpening) {
  store_.reset();
  auto wrong = Store::Unlock(path_, "not the passphrase");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("wrong passphrase"), std::string::npos) << wrong.status().ToString();
  auto keyless = Store::Open(path_);
  ASSERT_FALSE(keyless.ok());
  EXPECT_NE(keyless.status().message().find("encrypted"), std::string::npos) << keyless.status().ToString();
  // A key of another store opens nothing of this one: its key check refuses
  // it, and were that skipped, its objects would not open under that key.
  auto other = crypto::RandomKey();
  ASSERT_TRUE(other.ok());
  Reopen();
  const Hash id = PutChunk("sealed under the right key");
  std::string pack;
  const PackEntry entry = Located(id, &pack);
  store_.reset();
  auto foreign = Store::Open(path_, Env::Default(), &*other);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("does not belong"), std::string::npos) << foreign.status().ToString();
  auto foreign_cipher = StoreCipher::FromMasterKey(*other);
  ASSERT_TRUE(foreign_cipher.ok());
  std::ifstream in(pack, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto opened = (*foreign_cipher)->OpenObject(entry, std::string_view(bytes).substr(entry.offset, entry.stored_len));
  EXPECT_TRUE(opened.status().IsCorruption()) << "opened under a foreign key";
  auto own = Store::Unlock(path_, kPassphrase);
  ASSERT_TRUE(own.ok());
  auto own_cipher = StoreCipher::FromMasterKey(*own);
  ASSERT_TRUE(own_cipher.ok());
  EXPECT_TRUE((*own_cipher)->OpenObject(entry, std::string_view(bytes).substr(entry.offset, entry.stored_len)).ok());
}

TEST_F(EncryptedStoreTest, PlaintextNamesAndPublicIdsAppearNowhereInTheStore) {
  const std::string secret = "the plaintext of a file nobody may read " + std::string(3000, 'q');
  const Hash id = PutChunk(secret);
  EXPECT_NE(id, ComputeObjectId(ObjectType::kChunk, secret)) << "ids are keyed";
  auto commit = store_->Put(ObjectType::kCommit, "a commit message that must stay private");
  ASSERT_TRUE(commit.ok() && store_->Flush().ok());
  ASSERT_TRUE(store_->CompareAndSwapRef("private-branch-name", std::nullopt, commit->id).ok());

  auto read = store_->Get(id, ObjectType::kChunk);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, secret);
  auto refs = store_->ListRefs();
  ASSERT_TRUE(refs.ok());
  ASSERT_EQ(refs->size(), 1u);
  EXPECT_EQ(refs->begin()->first, "private-branch-name");
  EXPECT_EQ(refs->begin()->second, commit->id);

  store_.reset();  // everything on disk
  const std::string all = AllStoreBytes();
  EXPECT_EQ(all.find("the plaintext of a file"), std::string::npos);
  EXPECT_EQ(all.find("qqqqqqqq"), std::string::npos);
  EXPECT_EQ(all.find("a commit message"), std::string::npos);
  EXPECT_EQ(all.find("private-branch-name"), std::string::npos);
  const Hash public_id = ComputeObjectId(ObjectType::kChunk, secret);
  EXPECT_EQ(all.find(std::string(reinterpret_cast<const char*>(public_id.bytes.data()), Hash::kSize)),
            std::string::npos);
  EXPECT_EQ(all.find(public_id.ToHex()), std::string::npos);
  Reopen();
  auto again = store_->GetRef("private-branch-name");
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ(**again, commit->id);
}

TEST_F(EncryptedStoreTest, AFlippedByteIsDamageNamingTheObjectOnReadAndVerify) {
  const Hash id = PutChunk(std::string(5000, 'x') + "payload");
  std::string pack;
  const PackEntry e = Located(id, &pack);
  EXPECT_EQ(e.codec, Codec::kSealed);
  std::string bytes = *Env::Default()->ReadFile(pack);
  bytes[e.offset + e.stored_len / 2] ^= 0x10;
  Rewrite(pack, bytes);
  Reopen();
  auto read = store_->Get(id, ObjectType::kChunk);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(read.status().IsCorruption());
  EXPECT_NE(read.status().message().find(id.ToHex()), std::string::npos) << read.status().ToString();
  EXPECT_EQ(DamagedByVerify().count(id.ToHex()), 1u);
}

TEST_F(EncryptedStoreTest, SwappedObjectsAreBothDamage) {
  // Two objects of one size in one pack: their sealed bytes swapped, each
  // entry still points at bytes of the right length.
  auto a = store_->Put(ObjectType::kChunk, std::string(4000, 'a'));
  auto b = store_->Put(ObjectType::kChunk, std::string(4000, 'b'));
  ASSERT_TRUE(a.ok() && b.ok() && store_->Flush().ok());
  std::string pack_a, pack_b;
  const PackEntry ea = Located(a->id, &pack_a), eb = Located(b->id, &pack_b);
  ASSERT_EQ(pack_a, pack_b);
  ASSERT_EQ(ea.stored_len, eb.stored_len);
  std::string bytes = *Env::Default()->ReadFile(pack_a);
  std::string sa = bytes.substr(ea.offset, ea.stored_len), sb = bytes.substr(eb.offset, eb.stored_len);
  bytes.replace(ea.offset, ea.stored_len, sb);
  bytes.replace(eb.offset, eb.stored_len, sa);
  Rewrite(pack_a, bytes);
  Reopen();
  EXPECT_TRUE(store_->Get(a->id, ObjectType::kChunk).status().IsCorruption());
  EXPECT_TRUE(store_->Get(b->id, ObjectType::kChunk).status().IsCorruption());
  const auto damaged = DamagedByVerify();
  EXPECT_EQ(damaged.count(a->id.ToHex()), 1u);
  EXPECT_EQ(damaged.count(b->id.ToHex()), 1u);
}

TEST_F(EncryptedStoreTest, AnUnsealedObjectIsRefusedEvenWithAMatchingChecksum) {
  // Objects that were not sealed with the store's key are refused, whatever
  // they are: a plain store's object is not copied in, nor read.
  StoredObject plain{ObjectType::kChunk, Codec::kFramed, 3, "abc"};
  auto put = store_->PutStored(ComputeObjectId(ObjectType::kChunk, "abc"), plain);
  ASSERT_FALSE(put.ok());
  EXPECT_NE(put.status().message().find("not sealed"), std::string::npos) << put.status().ToString();
}

TEST_F(EncryptedStoreTest, TheChunkerUsesTheKeyedGearTable) {
  const Chunker keyed = store_->NewChunker();
  const Chunker plain(store_->config().chunker);
  std::string data(8 << 20, '\0');
  uint64_t x = 12345;
  for (char& c : data) c = static_cast<char>((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  auto first_cut = [&](const Chunker& c) { return c.NextCut(reinterpret_cast<const uint8_t*>(data.data()), data.size()); };
  EXPECT_NE(first_cut(keyed), first_cut(plain)) << "the cut points of a known file differ in an encrypted store";
  EXPECT_EQ(first_cut(keyed), first_cut(store_->NewChunker()));
}

TEST_F(EncryptedStoreTest, SealingMovesToTheNextKeyGenerationAtTheLimit) {
  store_.reset();
  path_ = dir_.path() + "/limited";
  StoreConfig limited;
  limited.seal_limit = StoreConfig::kMinSealLimit;
  ASSERT_TRUE(Store::InitEncrypted(path_, limited, kPassphrase, kFastScrypt).ok());
  std::vector<Hash> ids;
  // Across reopens: the generation and its count are the index's.
  for (int round = 0; round < 3; round++) {
    Reopen();
    EXPECT_EQ(store_->config().seal_limit, StoreConfig::kMinSealLimit);
    for (int i = 0; i < 20; i++) ids.push_back(PutChunk("object " + std::to_string(round) + "/" + std::to_string(i)));
  }
  // 60 seals, 16 a generation: generations 0 to 3, each object opening under its own.
  Reopen();
  std::map<uint32_t, int> per_generation;
  for (size_t i = 0; i < ids.size(); i++) {
    std::string pack;
    const PackEntry entry = Located(ids[i], &pack);
    std::ifstream in(pack, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto generation = store_->cipher()->SealedGeneration(std::string_view(bytes).substr(entry.offset, entry.stored_len));
    ASSERT_TRUE(generation.ok());
    per_generation[*generation]++;
    auto got = store_->Get(ids[i], ObjectType::kChunk);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, "object " + std::to_string(i / 20) + "/" + std::to_string(i % 20));
  }
  EXPECT_EQ(per_generation, (std::map<uint32_t, int>{{0, 16}, {1, 16}, {2, 16}, {3, 12}}));
  EXPECT_TRUE(DamagedByVerify().empty());
}

// An encrypted store's config as init writes it (its id and check made up).
StoreConfig EncryptedConfig() {
  StoreConfig encrypted = StoreConfig().Encrypted();
  encrypted.store_id = std::string(32, 'a');
  encrypted.key_check = std::string(64, 'b');
  return encrypted;
}

TEST(EncryptedConfigTest, VersionAndEncryptionGoTogether) {
  const StoreConfig encrypted = EncryptedConfig();
  auto round = StoreConfig::FromJson(encrypted.ToJson());
  ASSERT_TRUE(round.ok()) << round.status().ToString();
  EXPECT_TRUE(round->encrypted());
  EXPECT_EQ(round->version, StoreConfig::kEncryptedFormatVersion);
  EXPECT_EQ(round->store_id, encrypted.store_id);
  EXPECT_EQ(round->key_check, encrypted.key_check);

  std::string no_encryption = StoreConfig().ToJson();
  no_encryption.replace(no_encryption.find("\"version\": 2"), 12, "\"version\": 3");
  EXPECT_FALSE(StoreConfig::FromJson(no_encryption).ok());

  std::string old_version = encrypted.ToJson();
  old_version.replace(old_version.find("\"version\": 4"), 12, "\"version\": 2");
  EXPECT_FALSE(StoreConfig::FromJson(old_version).ok());

  // A format 3 store (no key generations, no seal_limit) keeps opening, with the old bound.
  StoreConfig v3 = encrypted;
  v3.version = StoreConfig::kFirstEncryptedFormatVersion;
  auto opened_v3 = StoreConfig::FromJson(v3.ToJson());
  ASSERT_TRUE(opened_v3.ok()) << opened_v3.status().ToString();
  EXPECT_FALSE(opened_v3->seal_generations());
  EXPECT_EQ(opened_v3->seal_limit, StoreConfig::kMaxSealLimit);
  // Format 4 names its seal limit, within bounds.
  std::string too_small = encrypted.ToJson();
  too_small.replace(too_small.find("\"seal_limit\": 2147483648"), 25, "\"seal_limit\": 15");
  EXPECT_FALSE(StoreConfig::FromJson(too_small).ok());
  EXPECT_FALSE(StoreConfig::FromJson(v3.ToJson().replace(v3.ToJson().find("\"version\": 3"), 12, "\"version\": 4")).ok());

  std::string other_cipher = encrypted.ToJson();
  other_cipher.replace(other_cipher.find("aes-256-gcm"), 11, "rot13-xor-1");
  auto refused = StoreConfig::FromJson(other_cipher);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kUnsupported);
}

TEST(EncryptedConfigTest, AStoreIdAndKeyCheckAreRequiredAndWellFormed) {
  const StoreConfig encrypted = EncryptedConfig();
  for (auto [field, value] : {std::pair{&StoreConfig::store_id, std::string(31, 'a')},
                              std::pair{&StoreConfig::store_id, std::string(32, 'A')},
                              std::pair{&StoreConfig::key_check, std::string(64, 'g')},
                              std::pair{&StoreConfig::key_check, std::string()}}) {
    StoreConfig bad = encrypted;
    bad.*field = value;
    auto refused = StoreConfig::FromJson(bad.ToJson());
    EXPECT_FALSE(refused.ok()) << "'" << value << "' was taken";
  }
  std::string without = encrypted.ToJson();
  without.erase(without.find(",\n    \"store_id\""), std::string(",\n    \"store_id\": \"\"").size() + 32);
  EXPECT_EQ(without.find("store_id"), std::string::npos) << without;
  EXPECT_FALSE(StoreConfig::FromJson(without).ok());
}

TEST(EncryptedConfigTest, TheMasterKeyOfAnotherStoreIsRefusedBeforeAnythingIsWritten) {
  testing::TempDir dir;
  const std::string mine = dir.path() + "/mine", theirs = dir.path() + "/theirs";
  ASSERT_TRUE(Store::InitEncrypted(mine, StoreConfig(), kPassphrase, kFastScrypt).ok());
  ASSERT_TRUE(Store::InitEncrypted(theirs, StoreConfig(), kPassphrase, kFastScrypt).ok());
  auto my_config = Store::ReadConfig(mine), their_config = Store::ReadConfig(theirs);
  ASSERT_TRUE(my_config.ok() && their_config.ok());
  EXPECT_NE(my_config->store_id, their_config->store_id);
  auto their_key = Store::Unlock(theirs, kPassphrase);
  ASSERT_TRUE(their_key.ok()) << their_key.status().ToString();
  EXPECT_TRUE(Store::Open(theirs, Env::Default(), &*their_key).ok());
  // A key check holds nothing of the key: it is not the key, nor any subkey.
  EXPECT_EQ(their_config->key_check.find(HexEncode(their_key->view())), std::string::npos);

  // Nothing is recovered with a wrong key: a dead writer's temporary pack
  // (a pid no process has), which opening with the right key removes, stays.
  const std::string leftover = mine + "/tmp/999999999-0-0.tmp";
  ASSERT_TRUE(Env::Default()->WriteFileAtomically(leftover, "partial").ok());
  auto refused = Store::Open(mine, Env::Default(), &*their_key);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("does not belong to the store"), std::string::npos)
      << refused.status().ToString();
  EXPECT_TRUE(Env::Default()->Exists(leftover));

  // A key check changed in config.json refuses even the store's own key.
  auto my_key = Store::Unlock(mine, kPassphrase);
  ASSERT_TRUE(my_key.ok());
  ASSERT_TRUE(Store::Open(mine, Env::Default(), &*my_key).ok());
  EXPECT_FALSE(Env::Default()->Exists(leftover));
  StoreConfig forged = *my_config;
  forged.key_check = their_config->key_check;
  ASSERT_TRUE(Env::Default()->WriteFileAtomically(mine + "/config.json", forged.ToJson()).ok());
  EXPECT_FALSE(Store::Open(mine, Env::Default(), &*my_key).ok());
}

TEST(EncryptedConfigTest, PlainStoreRefusesAKeyAndSealedObjects) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/plain";
  ASSERT_TRUE(Store::Init(path, StoreConfig()).ok());
  auto key = crypto::RandomKey();
  ASSERT_TRUE(key.ok());
  EXPECT_FALSE(Store::Open(path, Env::Default(), &*key).ok());
  EXPECT_FALSE(Store::Unlock(path, kPassphrase).ok());
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  StoredObject sealed{ObjectType::kChunk, Codec::kSealed, 3, std::string(40, 's')};
  EXPECT_FALSE((*store)->PutStored(Hash(), sealed).ok());
}

}  // namespace
}  // namespace strata
