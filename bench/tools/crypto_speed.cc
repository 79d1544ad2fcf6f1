// crypto_speed: what encryption at rest costs on the CPU alone, one core, to
// set against the store's other per-byte work (docs/format/encryption.md).
//
// Usage: crypto_speed [MIB]   (default 256: MIB MiB of random bytes, cut in
// 512 KiB objects, the chunker's average)
//
// Prints, best / median / worst of 5 passes: AES-256-GCM seal and open MB/s,
// HMAC-SHA256 keyed ids against plain SHA-256 ids MB/s, and the chunker's
// MB/s with the default gear table against a keyed one; then the time of the
// passphrase KDF (scrypt) with the default parameters, 3 runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "crypto/aead.h"
#include "crypto/gear_table.h"
#include "crypto/keyed_id.h"
#include "crypto/passphrase_kdf.h"
#include "store/chunker.h"
#include "util/hash.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace crypto = strata::crypto;

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Runs pass `runs` times; prints best, median and worst of bytes / time in MB/s.
void Report(const char* what, size_t bytes, int runs, const std::function<void()>& pass) {
  std::vector<double> rates;
  for (int i = 0; i < runs; i++) {
    auto start = Clock::now();
    pass();
    rates.push_back(static_cast<double>(bytes) / 1e6 / Seconds(start));
  }
  std::sort(rates.begin(), rates.end());
  std::printf("%-28s %8.0f %8.0f %8.0f MB/s (best, median, worst of %d)\n", what, rates.back(),
              rates[rates.size() / 2], rates.front(), runs);
}

template <typename T>
T Must(strata::Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "crypto_speed: %s\n", r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  if (mib == 0) {
    std::fprintf(stderr, "usage: crypto_speed [MIB]\n");
    return 2;
  }
  constexpr size_t kObject = 512 * 1024;
  std::mt19937_64 rng(1);
  std::string data(mib << 20, '\0');
  for (size_t i = 0; i + 8 <= data.size(); i += 8) {
    uint64_t v = rng();
    __builtin_memcpy(&data[i], &v, 8);
  }
  std::vector<std::string_view> objects;
  for (size_t off = 0; off < data.size(); off += kObject) objects.push_back(std::string_view(data).substr(off, kObject));
  const std::string aad(48, 'h');  // an object header and a 32-byte id
  crypto::Key256 key = Must(crypto::RandomKey());
  std::vector<std::string> sealed(objects.size());
  size_t sink = 0;

  Report("AES-256-GCM seal", data.size(), 5, [&] {
    for (size_t i = 0; i < objects.size(); i++) sealed[i] = Must(crypto::Seal(key, objects[i], aad));
  });
  Report("AES-256-GCM open", data.size(), 5, [&] {
    for (const auto& s : sealed) sink += Must(crypto::Open(key, s, aad, "object")).size();
  });
  Report("HMAC-SHA256 keyed id", data.size(), 5, [&] {
    for (auto o : objects) sink += Must(crypto::KeyedId(key, o)).bytes[0];
  });
  Report("SHA-256 id (plain stores)", data.size(), 5, [&] {
    for (auto o : objects) sink += strata::Sha256::Of(o.data(), o.size()).bytes[0];
  });
  auto chunk_all = [&](const strata::Chunker& chunker) {
    const auto* p = reinterpret_cast<const uint8_t*>(data.data());
    for (size_t pos = 0; pos < data.size();) pos += chunker.NextCut(p + pos, data.size() - pos);
  };
  strata::Chunker plain{strata::ChunkerParams{}};
  strata::Chunker keyed{strata::ChunkerParams{}, Must(crypto::DeriveGearTable(key))};
  Report("chunker, default table", data.size(), 5, [&] { chunk_all(plain); });
  Report("chunker, keyed table", data.size(), 5, [&] { chunk_all(keyed); });

  crypto::ScryptParams params;
  std::vector<double> times;
  for (int i = 0; i < 3; i++) {
    auto start = Clock::now();
    crypto::Key256 k = Must(crypto::DeriveWrappingKey("a passphrase", std::string(32, 's'), params));
    times.push_back(Seconds(start));
    sink += k.bytes[0];
  }
  std::sort(times.begin(), times.end());
  std::printf("scrypt N=2^%d r=%u p=%u (%.0f MiB)  %.3f %.3f %.3f s (best, median, worst of 3)\n", params.log2_n,
              params.r, params.p, static_cast<double>(params.MemoryBytes()) / (1 << 20), times[0], times[1], times[2]);
  return sink == 42 ? 3 : 0;  // keeps the results alive
}
