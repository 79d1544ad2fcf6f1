#include "remote/seal_grants.h"

#include <charconv>

#include "remote/gc_protocol.h"
#include "store/seal_limit.h"
#include "store/store_cipher.h"

namespace strata {
namespace {

constexpr std::string_view kMagic = "strata-generations 1 ";
constexpr uint64_t kGenerationSpace = uint64_t{1} << 32;

bool ParseNumber(std::string_view text, uint64_t* out) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool IsClaimId(std::string_view text) {
  if (text == "-") return true;
  if (text.size() != 32) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

std::string EncodeBucketGenerations(const BucketGenerations& g) {
  return std::string(kMagic) + std::to_string(g.left.first) + " " + std::to_string(g.left.end) + " " + g.claim + "\n";
}

Result<BucketGenerations> DecodeBucketGenerations(std::string_view body) {
  auto bad = [] { return Status::Corruption("the bucket's '" + std::string(kGenerationsKey) + "' is damaged"); };
  if (body.size() > 128 || body.substr(0, kMagic.size()) != kMagic || body.back() != '\n') return bad();
  body.remove_prefix(kMagic.size());
  body.remove_suffix(1);
  const size_t a = body.find(' ');
  const size_t b = a == std::string_view::npos ? a : body.find(' ', a + 1);
  if (b == std::string_view::npos) return bad();
  BucketGenerations g;
  if (!ParseNumber(body.substr(0, a), &g.left.first) || !ParseNumber(body.substr(a + 1, b - a - 1), &g.left.end))
    return bad();
  g.claim = std::string(body.substr(b + 1));
  if (g.left.first > g.left.end || g.left.end > kGenerationSpace || !IsClaimId(g.claim)) return bad();
  return g;
}

Result<std::optional<BucketGenerations>> ReadBucketGenerations(S3Client& client) {
  STRATA_ASSIGN_OR_RETURN(auto body, client.Get(kGenerationsKey));
  if (!body) return std::optional<BucketGenerations>();
  STRATA_ASSIGN_OR_RETURN(BucketGenerations g, DecodeBucketGenerations(body->data));
  return std::optional<BucketGenerations>(g);
}

Status GiveBucketGenerations(S3Client& client, const SealRange& range) {
  STRATA_RETURN_IF_ERROR(client.PutIf(kGenerationsKey, EncodeBucketGenerations({range, "-"}), std::nullopt).status());
  // Whatever the answer, only what is there counts: ours, or one given first.
  STRATA_ASSIGN_OR_RETURN(auto there, ReadBucketGenerations(client));
  if (!there)
    return Status::Unavailable(client.location().Url() + ": its key generations could not be stored there");
  return Status::Ok();
}

Result<SealRange> ClaimBucketGenerations(S3Client& client, uint64_t max_count) {
  for (int attempt = 0; attempt < 16; attempt++) {
    STRATA_ASSIGN_OR_RETURN(auto body, client.Get(kGenerationsKey));
    if (!body)
      return Status::Corruption(client.location().Url() + " is an encrypted store's remote without its '" +
                                kGenerationsKey + "': add it again from a store that seals (it gives them)");
    STRATA_ASSIGN_OR_RETURN(BucketGenerations now, DecodeBucketGenerations(body->data));
    const uint64_t count = std::min(max_count, (now.left.end - now.left.first) / 2);
    if (count == 0)
      return Status::Unsupported(client.location().Url() + " has no key generations left to give another store");
    BucketGenerations after{{now.left.first, now.left.end - count}, RandomKeyId()};
    const std::string written = EncodeBucketGenerations(after);
    STRATA_ASSIGN_OR_RETURN(S3PutOutcome outcome, client.PutIf(kGenerationsKey, written, body->etag));
    if (outcome == S3PutOutcome::kWritten) return SealRange{after.left.end, now.left.end};
    if (outcome == S3PutOutcome::kUnknown) {
      // The claim id is ours alone: the object holds it only if our write landed.
      STRATA_ASSIGN_OR_RETURN(auto again, client.Get(kGenerationsKey));
      if (again && again->data == written) return SealRange{after.left.end, now.left.end};
    }
    // Another claim came first (or ours did not land): claim again from what is left.
  }
  return Status::Unavailable(client.location().Url() + ": could not claim key generations (too many at once)");
}

Status CheckRemoteConfig(const StoreConfig& local, const StoreConfig& remote, const crypto::Key256* master,
                         const std::string& url) {
  if (local.encrypted() != remote.encrypted())
    return Status::InvalidArgument(
        std::string("the store here is ") + (local.encrypted() ? "encrypted" : "not encrypted") + " and " + url +
        " holds " + (remote.encrypted() ? "an encrypted" : "a plain") +
        " store: strata copies objects only between plain stores or between encrypted stores with one master key "
        "(it does not re-encrypt); nothing was written");
  if (!remote.encrypted()) return Status::Ok();
  if (!remote.seal_generations())
    return Status::Unsupported(url + " holds an encrypted store of format " + std::to_string(remote.version) +
                               ", made before key generations; it cannot be shared");
  if (master == nullptr) return Status::InvalidArgument(url + " holds an encrypted store: its key is needed");
  STRATA_ASSIGN_OR_RETURN(std::string check, StoreCipher::KeyCheck(*master, remote.store_id));
  if (check != remote.key_check)
    return Status::InvalidArgument(url + " holds an encrypted store with another master key than the store here "
                                   "(its key check differs); nothing was read but its config.json, nothing written");
  return Status::Ok();
}

Status ShareSealGenerations(Store& local, S3Client& client, const StoreConfig& bucket) {
  STRATA_ASSIGN_OR_RETURN(auto given, ReadBucketGenerations(client));
  if (!given) {
    // The first store to add the bucket (or one after a crash before this):
    // a grant lost by a crash here is only unused, never handed out twice.
    STRATA_ASSIGN_OR_RETURN(SealRange grant, local.GrantSealGenerations(kBucketGrant));
    STRATA_RETURN_IF_ERROR(GiveBucketGenerations(client, grant));
  }
  STRATA_ASSIGN_OR_RETURN(SealRange owned, local.OwnedSealGenerations());
  if (owned.first < owned.end) return Status::Ok();
  if (bucket.seal_generations()) STRATA_RETURN_IF_ERROR(TakeSealLimitBeforeFirstSeal(local, bucket.seal_limit));
  STRATA_ASSIGN_OR_RETURN(SealRange claimed, ClaimBucketGenerations(client, kStoreClaim));
  return local.AdoptSealGenerations(claimed);
}

}  // namespace strata
