// SHA-256 (OpenSSL; uses SHA-NI where the CPU has it) and the 32-byte Hash value.
//
// Hash is the identity of every object in the store and of every pack file.
// Thread-safety: Sha256 instances are not shared; Hash is a value.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

struct Hash {
  static constexpr size_t kSize = 32;
  std::array<uint8_t, kSize> bytes{};

  std::string ToHex() const;
  // Parses exactly 64 lowercase or uppercase hex digits.
  static std::optional<Hash> FromHex(std::string_view hex);
  static Hash FromBytes(const void* data);  // REQUIRES: kSize readable bytes
  bool IsZero() const;

  auto operator<=>(const Hash&) const = default;
};

// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256(Sha256&& other) noexcept : ctx_(other.ctx_) { other.ctx_ = nullptr; }
  Sha256& operator=(Sha256&&) = delete;

  void Update(const void* data, size_t n);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  Hash Finish();  // the object must not be updated afterwards
  // An independent hasher in the same state: what Finish would give after
  // more bytes, without committing this one to them.
  Sha256 Clone() const;

  static Hash Of(const void* data, size_t n);

 private:
  void* ctx_;  // EVP_MD_CTX*, kept opaque so OpenSSL headers stay out of ours
};

}  // namespace strata

template <>
struct std::hash<strata::Hash> {
  size_t operator()(const strata::Hash& h) const noexcept {
    size_t v;
    static_assert(sizeof(v) <= strata::Hash::kSize);
    __builtin_memcpy(&v, h.bytes.data(), sizeof(v));  // already uniformly distributed
    return v;
  }
};
