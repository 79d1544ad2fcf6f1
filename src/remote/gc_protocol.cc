#include "remote/gc_protocol.h"

#include <algorithm>
#include <charconv>
#include <mutex>
#include <random>

#include "util/thread_pool.h"

namespace strata {
namespace {

constexpr std::string_view kLeaseMagic = "strata-lease 1 ";
constexpr std::string_view kCondemnedMagic = "strata-condemned 1 ";

// "MAGIC SECONDS\n" at the start of body; the rest after the newline.
Result<uint32_t> DecodeHeader(std::string_view body, std::string_view magic, std::string_view* rest) {
  size_t newline = body.find('\n');
  if (body.substr(0, magic.size()) != magic || newline == std::string_view::npos)
    return Status::Corruption("does not start with '" + std::string(magic) + "SECONDS'");
  std::string_view digits = body.substr(magic.size(), newline - magic.size());
  uint32_t seconds = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seconds);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty())
    return Status::Corruption("holds no valid number of seconds");
  *rest = body.substr(newline + 1);
  return seconds;
}

}  // namespace

std::string RandomKeyId() {
  std::random_device random;
  std::string out;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 4; i++) {
    uint32_t v = random();
    for (int j = 0; j < 8; j++, v >>= 4) out += kHex[v & 15];
  }
  return out;
}

std::string EncodeLease(uint32_t seconds) { return std::string(kLeaseMagic) + std::to_string(seconds) + "\n"; }

Result<uint32_t> DecodeLease(std::string_view body) {
  std::string_view rest;
  STRATA_ASSIGN_OR_RETURN(uint32_t seconds, DecodeHeader(body, kLeaseMagic, &rest));
  if (!rest.empty()) return Status::Corruption("has bytes after its header");
  return seconds;
}

std::string EncodeCondemned(const CondemnedList& list) {
  std::string out = std::string(kCondemnedMagic) + std::to_string(list.seconds) + "\n";
  out.reserve(out.size() + list.ids.size() * (Hash::kSize * 2 + 1));
  for (const Hash& id : list.ids) out += id.ToHex() + "\n";
  return out;
}

Result<CondemnedList> DecodeCondemned(std::string_view body) {
  CondemnedList list;
  std::string_view rest;
  STRATA_ASSIGN_OR_RETURN(list.seconds, DecodeHeader(body, kCondemnedMagic, &rest));
  while (!rest.empty()) {
    size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) return Status::Corruption("ends inside a line");
    auto id = Hash::FromHex(rest.substr(0, newline));
    if (!id) return Status::Corruption("holds a line that is not an object id");
    list.ids.push_back(*id);
    rest.remove_prefix(newline + 1);
  }
  return list;
}

Result<std::unordered_set<Hash>> ReadCondemned(S3Client& client) {
  std::unordered_set<Hash> ids;
  STRATA_ASSIGN_OR_RETURN(auto keys, client.List(kCondemnedFolder));
  for (const S3ObjectInfo& key : keys) {
    STRATA_ASSIGN_OR_RETURN(auto body, client.Get(key.key));
    if (!body) continue;  // its gc finished meanwhile
    auto list = DecodeCondemned(body->data);
    if (!list.ok()) return list.status().WithContext("gc list " + client.location().Url() + "/" + key.key);
    ids.insert(list->ids.begin(), list->ids.end());
  }
  return ids;
}

Result<std::unordered_set<Hash>> ReadForgotten(S3Client& client) {
  STRATA_ASSIGN_OR_RETURN(auto keys, client.List(kForgottenFolder));
  std::unordered_set<Hash> commits;
  for (const S3ObjectInfo& key : keys)
    if (auto id = Hash::FromHex(std::string_view(key.key).substr(std::string_view(kForgottenFolder).size())))
      commits.insert(*id);
  return commits;
}

Status WriteForgotten(S3Client& client, const std::vector<Hash>& commits) {
  if (commits.empty()) return Status::Ok();
  // One object a commit, a round trip each: a year of daily commits is
  // hundreds of them, so many go at once (the client is thread-safe; each
  // request is a few hundred bytes, so the round trip is all it costs).
  constexpr size_t kWriters = 32;
  std::mutex mu;
  Status first = Status::Ok();
  ThreadPool pool(std::min(kWriters, commits.size()));
  for (const Hash& id : commits)
    pool.Submit([&, id] {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!first.ok()) return;
      }
      Status s = client.Put(kForgottenFolder + id.ToHex(), "");
      std::lock_guard<std::mutex> lock(mu);
      if (!s.ok() && first.ok()) first = s;
    });
  pool.Wait();
  return first;
}

}  // namespace strata
