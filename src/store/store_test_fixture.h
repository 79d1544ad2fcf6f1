// StoreTest: a fresh store per test, reopened at will, for the store's tests
// (store_test.cc, frame_test.cc, pack_merge_test.cc, forget_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "store/store.h"
#include "store/verify.h"
#include "testing/store_test_util.h"

namespace strata {

// The objects `strata verify` names as damaged (hex ids).
inline std::set<std::string> ObjectsDamagedByVerify(Store& store) {
  auto report = VerifyStore(store, nullptr);
  EXPECT_TRUE(report.ok());
  std::set<std::string> named;
  if (report.ok())
    for (const auto& p : report->problems) named.insert(p.object);
  return named;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/store";
    ASSERT_TRUE(Store::Init(path_, StoreConfig()).ok());
    Reopen();
  }
  void Reopen() {
    store_.reset();
    auto s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  std::string OnlyPack() {
    auto files = Env::Default()->ListDir(path_ + "/packs");
    EXPECT_EQ(files->size(), 1u);
    return path_ + "/packs/" + (*files)[0];
  }
  // Flips bits of one byte of `file`, keeping its size.
  void FlipByteAt(const std::string& file, uint64_t offset, char bits = 0x04) {
    std::string data = *Env::Default()->ReadFile(file);
    data[offset] ^= bits;
    ASSERT_TRUE(Env::Default()->RemoveFile(file).ok());
    auto w = Env::Default()->NewWritableFile(file);
    ASSERT_TRUE((*w)->Append(data).ok() && (*w)->Close().ok());
  }

  std::set<std::string> DamagedByVerify() { return ObjectsDamagedByVerify(*store_); }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

}  // namespace strata
