#include <gtest/gtest.h>

#include "store/pack_reader.h"
#include "store/pack_writer.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

class PackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_->CreateDir(dir_.path() + "/tmp").ok());
    ASSERT_TRUE(env_->CreateDir(dir_.path() + "/packs").ok());
  }

  SealedPack WritePack(const std::vector<std::string>& objects) {
    auto w = PackWriter::Create(env_, dir_.path() + "/tmp");
    EXPECT_TRUE(w.ok());
    for (const std::string& o : objects) {
      std::string stored;
      Codec codec = Compress(o, 3, &stored);
      EXPECT_TRUE((*w)->Add(ComputeObjectId(ObjectType::kChunk, o), ObjectType::kChunk, codec, stored, o.size()).ok());
    }
    auto sealed = (*w)->Finish();
    EXPECT_TRUE(sealed.ok()) << sealed.status().ToString();
    EXPECT_TRUE(backend_->PublishPack(sealed->local_path, sealed->name).ok());
    return *sealed;
  }

  std::string PackPath(const SealedPack& p) { return dir_.path() + "/packs/" + p.name; }

  Env* env_ = Env::Default();
  testing::TempDir dir_;
  // Refs are not used here, so the backend needs no index.
  std::unique_ptr<Backend> backend_ = NewLocalBackend(env_, dir_.path(), nullptr);
};

TEST_F(PackTest, WrittenObjectsReadBackThroughFooter) {
  std::vector<std::string> objects = {std::string(1000, 'x'), testing::RandomBytes(5000, 1), "tiny"};
  SealedPack pack = WritePack(objects);
  EXPECT_TRUE(PackNameToHash(pack.name).has_value());
  auto file = env_->NewRandomAccessFile(PackPath(pack));
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->Size(), pack.size);
  auto entries = ReadPackIndex(**file, nullptr);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), objects.size());
  PackCache cache(backend_.get());
  for (size_t i = 0; i < objects.size(); i++) {
    auto raw = cache.ReadObject(pack.name, (*entries)[i]);
    ASSERT_TRUE(raw.ok()) << raw.status().ToString();
    EXPECT_EQ(*raw, objects[i]);
    auto buffer = cache.ReadObjectBuffer(pack.name, (*entries)[i]);
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    EXPECT_EQ(buffer->view(), objects[i]);
  }
  // The temp file is gone once the pack is sealed.
  EXPECT_TRUE(env_->ListDir(dir_.path() + "/tmp")->empty());
}

TEST_F(PackTest, FlippedPayloadByteIsCorruptionNamingObjectAndPack) {
  // One object stored raw (random bytes), one compressed (text): each read
  // path, into a string and into a Buffer, must see the damage.
  for (const std::string& object : {testing::RandomBytes(4000, 2), std::string(4000, 't') + "tail"}) {
    SealedPack pack = WritePack({object});
    const PackEntry& e = pack.entries[0];
    {
      auto data = env_->ReadFile(PackPath(pack));
      std::string bytes = *data;
      bytes[e.offset + std::min<uint64_t>(100, e.stored_len - 1)] ^= 1;
      ASSERT_TRUE(env_->RemoveFile(PackPath(pack)).ok());
      auto w = env_->NewWritableFile(PackPath(pack));
      ASSERT_TRUE((*w)->Append(bytes).ok());
      ASSERT_TRUE((*w)->Close().ok());
    }
    PackCache cache(backend_.get());
    auto raw = cache.ReadObject(pack.name, e);
    ASSERT_TRUE(raw.status().IsCorruption());
    EXPECT_NE(raw.status().message().find(e.id.ToHex()), std::string::npos);
    EXPECT_NE(raw.status().message().find(pack.name), std::string::npos);
    auto buffer = cache.ReadObjectBuffer(pack.name, e);
    ASSERT_TRUE(buffer.status().IsCorruption()) << buffer.status().ToString();
    EXPECT_NE(buffer.status().message().find(e.id.ToHex()), std::string::npos);
    EXPECT_EQ(cache.counters().bytes_verified, 0u);
  }
}

TEST_F(PackTest, LyingTrailersAndFootersAreRejected) {
  std::string trailer(kPackTrailerSize, '\0');
  EXPECT_TRUE(DecodePackTrailer(trailer, 1000).status().IsCorruption());  // no magic
  EXPECT_TRUE(DecodePackTrailer(trailer, 10).status().IsCorruption());    // too short
  PackEntry e;
  e.offset = 16;
  e.stored_len = 1 << 20;  // past the footer
  EXPECT_TRUE(DecodePackFooter(EncodePackFooter({e}), 100).status().IsCorruption());
  e.stored_len = 10;
  e.raw_len = kMaxObjectSize + 1;
  EXPECT_TRUE(DecodePackFooter(EncodePackFooter({e}), 100).status().IsCorruption());
  std::string huge_count;
  huge_count.push_back('\x7f');  // 127 entries in a 1-byte footer
  EXPECT_TRUE(DecodePackFooter(huge_count, 100).status().IsCorruption());
}

TEST_F(PackTest, TruncatedPackIsRejected) {
  SealedPack pack = WritePack({"some object data"});
  auto bytes = env_->ReadFile(PackPath(pack));
  for (size_t cut : {size_t{0}, size_t{10}, bytes->size() / 2, bytes->size() - 1}) {
    std::string path = dir_.path() + "/cut";
    if (cut != 0) {
      ASSERT_TRUE(env_->RemoveFile(path).ok());  // the last round's
    }
    auto w = env_->NewWritableFile(path);
    ASSERT_TRUE((*w)->Append(std::string_view(*bytes).substr(0, cut)).ok());
    ASSERT_TRUE((*w)->Close().ok());
    auto f = env_->NewRandomAccessFile(path);
    EXPECT_FALSE(ReadPackIndex(**f, nullptr).ok()) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace strata
