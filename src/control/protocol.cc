#include "control/protocol.h"

#include <optional>

#include "util/hex.h"

namespace strata::control {

Result<nlohmann::ordered_json> DecodeControlReplyOrStop(DaemonRequest::Op op, std::string_view reply) {
  // The daemon ends every reply with a newline before it closes the
  // connection: without one, it stopped (was killed) while serving the
  // request. That says nothing about the store, so it is no Corruption.
  if (!reply.ends_with('\n')) return Status::Unavailable(kDaemonStoppedMessage);
  reply.remove_suffix(1);
  return DecodeControlReply(op, reply);
}

namespace {

using Json = nlohmann::ordered_json;

constexpr std::pair<DaemonRequest::Op, const char*> kOpNames[] = {
    {DaemonRequest::Op::kStats, "stats"},   {DaemonRequest::Op::kCommit, "commit"},
    {DaemonRequest::Op::kSnapshot, "snapshot"}, {DaemonRequest::Op::kReset, "reset"},
    {DaemonRequest::Op::kRebase, "rebase"}};

// Fields of a reply, checked as the CLI reads them.
bool Unsigned(const Json& j, const char* key) { return j.contains(key) && j[key].is_number_unsigned(); }
bool Number(const Json& j, const char* key) { return j.contains(key) && j[key].is_number(); }
bool Bool(const Json& j, const char* key) { return j.contains(key) && j[key].is_boolean(); }
bool String(const Json& j, const char* key) { return j.contains(key) && j[key].is_string(); }
bool Object(const Json& j, const char* key) { return j.contains(key) && j[key].is_object(); }
bool All(const Json& j, std::initializer_list<const char*> keys, bool (*check)(const Json&, const char*)) {
  for (const char* k : keys)
    if (!check(j, k)) return false;
  return true;
}

bool StatsReplyReadable(const Json& j) {
  if (!Object(j, "operations") || !Object(j, "workspace")) return false;
  for (const auto& [name, op] : j["operations"].items()) {
    if (!op.is_object() || !All(op, {"count", "errors"}, Unsigned) || !Object(op, "latency_us")) return false;
    for (const auto& [bucket, n] : op["latency_us"].items())
      if (!n.is_number_unsigned()) return false;
  }
  const Json& ws = j["workspace"];
  if (!All(ws, {"changed_paths", "batches_committed", "operations_committed", "commit_us_total", "commit_us_max",
                "syncs", "bytes_written", "bytes_read", "directories_loaded"},
           Unsigned))
    return false;
  if (!Object(ws, "chunk_cache") || !All(ws["chunk_cache"], {"hits", "misses", "waits"}, Unsigned)) return false;
  if (!ws.contains("read_path")) return true;
  const Json& r = ws["read_path"];
  if (!r.is_object() ||
      !All(r, {"demands", "fetches", "fetch_errors", "fetches_in_flight_max", "cache_bytes", "cache_capacity",
               "readahead_issued", "readahead_used", "readahead_wasted", "readahead_skipped"},
           Unsigned) ||
      !Object(r, "store"))
    return false;
  const Json& st = r["store"];
  if (!All(st, {"objects", "bytes_stored", "bytes_verified", "max_in_flight"}, Unsigned) ||
      !All(st, {"lookup_us", "pread_us", "decode_us"}, Number))
    return false;
  // The checks' counters came later: a daemon older than this command has none.
  if (st.contains("frames_decoded") &&
      !All(st, {"frames_decoded", "range_reads", "fast_checked_bytes", "sha256_checked_bytes"}, Unsigned))
    return false;
  if (!st.contains("backend")) return true;
  const Json& b = st["backend"];
  if (!b.is_object()) return false;
  return !b.contains("cache_misses") ||
         All(b, {"cache_misses", "fetched_bytes", "cache_hits", "cache_waits", "cached_bytes", "cache_evictions"},
             Unsigned);
}

bool ReplyReadable(DaemonRequest::Op op, const Json& j) {
  switch (op) {
    case DaemonRequest::Op::kStats:
      return StatsReplyReadable(j);
    case DaemonRequest::Op::kCommit:
      return j.contains("commit") && (j["commit"].is_null() || String(j, "commit")) && String(j, "branch") &&
             Object(j, "stats") &&
             All(j["stats"], {"changed_inodes", "directories_written", "files_captured", "bytes_hashed",
                              "objects_written"}, Unsigned) &&
             All(j["stats"], {"cut_ms", "capture_ms", "trees_ms", "publish_ms", "rebase_ms"}, Number);
    case DaemonRequest::Op::kSnapshot:
      return SnapshotFromJson(j).ok();
    case DaemonRequest::Op::kReset:
      return String(j, "base") && Bool(j, "content_replaced") && Bool(j, "differs");
    case DaemonRequest::Op::kRebase: {
      if (!String(j, "onto") || !Bool(j, "up_to_date") || !Bool(j, "differs") || !j.contains("conflicts") ||
          !j["conflicts"].is_array() || !j.contains("root") || !(j["root"].is_null() || String(j, "root")))
        return false;
      for (const Json& c : j["conflicts"])
        if (!c.is_object() || !String(c, "path") || !String(c, "reason")) return false;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string EncodeDaemonRequest(const DaemonRequest& request) {
  Json j;
  for (const auto& [op, name] : kOpNames)
    if (op == request.op) j["op"] = name;
  switch (request.op) {
    case DaemonRequest::Op::kCommit:
      j["message"] = request.commit.message;
      j["author"] = request.commit.author;
      j["branch"] = request.commit.branch;
      break;
    case DaemonRequest::Op::kReset:
      j["commit"] = request.target.ToHex();
      j["hard"] = request.hard;
      break;
    case DaemonRequest::Op::kRebase:
      j["commit"] = request.target.ToHex();
      break;
    default:
      break;
  }
  // Messages are bytes a user typed: anything that is not UTF-8 is replaced.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<DaemonRequest> DecodeDaemonRequest(std::string_view line) {
  auto j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("request is not a JSON object");
  if (!String(j, "op")) return Status::InvalidArgument("request without an op");
  const std::string op = j["op"].get<std::string>();
  DaemonRequest r;
  bool known = false;
  for (const auto& [value, name] : kOpNames)
    if (op == name) r.op = value, known = true;
  if (!known) return Status::InvalidArgument("unknown request '" + op + "'");
  auto text = [&](const char* key, std::string* out) {
    if (!j.contains(key)) return true;
    if (!j[key].is_string()) return false;
    *out = j[key].get<std::string>();
    return true;
  };
  switch (r.op) {
    case DaemonRequest::Op::kCommit:
      if (!text("message", &r.commit.message) || !text("author", &r.commit.author) ||
          !text("branch", &r.commit.branch))
        return Status::InvalidArgument("commit: message, author and branch must be strings");
      break;
    case DaemonRequest::Op::kReset:
    case DaemonRequest::Op::kRebase: {
      std::optional<Hash> target;
      if (String(j, "commit")) target = Hash::FromHex(j["commit"].get<std::string>());
      if (!target) return Status::InvalidArgument(op + ": no commit id");
      r.target = *target;
      if (r.op == DaemonRequest::Op::kReset && j.contains("hard")) {
        if (!j["hard"].is_boolean()) return Status::InvalidArgument("reset: 'hard' must be true or false");
        r.hard = j["hard"].get<bool>();
      }
      break;
    }
    default:
      break;
  }
  return r;
}

Result<nlohmann::ordered_json> DecodeControlReply(DaemonRequest::Op op, std::string_view reply) {
  auto j = Json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Corruption("the daemon's reply is not what this strata reads");
  if (j.contains("error")) {
    std::string msg = j["error"].is_string() ? j["error"].get<std::string>() : "unknown error";
    std::string code = String(j, "code") ? j["code"].get<std::string>() : "failed";
    if (code == "conflict") return Status::Conflict(msg);
    if (code == "invalid") return Status::InvalidArgument(msg);
    if (code == "damaged") return Status::Corruption(msg);
    return Status::IOErrorWithMessage(msg, EIO);
  }
  if (!ReplyReadable(op, j)) return Status::Corruption("the daemon's reply is not what this strata reads");
  return j;
}

nlohmann::ordered_json CommitReplyJson(const CommitOutcome& outcome) {
  const CommitStats& s = outcome.stats;
  return {{"commit", outcome.commit ? nlohmann::ordered_json(outcome.commit->ToHex()) : nlohmann::ordered_json()},
          {"branch", outcome.branch},
          {"stats",
           {{"changed_inodes", s.changed_inodes},
            {"directories_written", s.directories_written},
            {"files_captured", s.files_captured},
            {"bytes_hashed", s.bytes_hashed},
            {"objects_written", s.objects_written},
            {"cut_ms", s.cut_ms},
            {"capture_ms", s.capture_ms},
            {"trees_ms", s.trees_ms},
            {"publish_ms", s.publish_ms},
            {"rebase_ms", s.rebase_ms}}}};
}

nlohmann::ordered_json RebaseReplyJson(const Hash& onto, const RebaseOutcome& outcome) {
  nlohmann::ordered_json conflicts = nlohmann::ordered_json::array();
  for (const MergeConflict& c : outcome.conflicts) conflicts.push_back({{"path", c.path}, {"reason", c.reason}});
  const bool rebased = !outcome.up_to_date && outcome.conflicts.empty();
  return {{"onto", onto.ToHex()},
          {"up_to_date", outcome.up_to_date},
          {"conflicts", std::move(conflicts)},
          {"root", rebased ? nlohmann::ordered_json(outcome.root.ToHex()) : nlohmann::ordered_json()},
          {"differs", outcome.differs}};
}

nlohmann::ordered_json ResetReplyJson(const Hash& commit, const ResetOutcome& outcome) {
  return {{"base", commit.ToHex()}, {"content_replaced", outcome.content_replaced}, {"differs", outcome.differs}};
}

nlohmann::ordered_json SnapshotReplyJson(const WorkspaceSnapshot& snap) {
  nlohmann::ordered_json xattrs = nlohmann::ordered_json::array();
  for (const auto& [name, value] : snap.root_meta.xattrs) xattrs.push_back({HexEncode(name), HexEncode(value)});
  const RootMeta& m = snap.root_meta;
  return {{"base", snap.base ? nlohmann::ordered_json(snap.base->ToHex()) : nlohmann::ordered_json()},
          {"root", snap.root.ToHex()},
          {"root_meta",
           {{"mode", m.mode},
            {"uid", m.uid},
            {"gid", m.gid},
            {"mtime_sec", m.mtime_sec},
            {"mtime_nsec", m.mtime_nsec},
            {"xattrs", xattrs}}},
          {"differs", snap.differs}};
}

Result<WorkspaceSnapshot> SnapshotFromJson(const nlohmann::ordered_json& j) {
  const Status bad = Status::Corruption("the daemon's snapshot reply is not what this strata reads");
  try {
    WorkspaceSnapshot snap;
    if (!j.at("base").is_null()) {
      snap.base = Hash::FromHex(j.at("base").get<std::string>());
      if (!snap.base) return bad;
    }
    auto root = Hash::FromHex(j.at("root").get<std::string>());
    if (!root) return bad;
    snap.root = *root;
    const auto& m = j.at("root_meta");
    // get<> converts any number (a float out of range: undefined behaviour)
    // or wraps: the types are checked first.
    auto u32 = [&](const char* key) -> std::optional<uint32_t> {
      const auto& v = m.at(key);
      if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX) return std::nullopt;
      return static_cast<uint32_t>(v.get<uint64_t>());
    };
    auto mode = u32("mode"), uid = u32("uid"), gid = u32("gid"), nsec = u32("mtime_nsec");
    if (!mode || !uid || !gid || !nsec || !m.at("mtime_sec").is_number_integer() ||
        (m.at("mtime_sec").is_number_unsigned() && m.at("mtime_sec").get<uint64_t>() > INT64_MAX))
      return bad;
    snap.root_meta.mode = *mode;
    snap.root_meta.uid = *uid;
    snap.root_meta.gid = *gid;
    snap.root_meta.mtime_sec = m.at("mtime_sec").get<int64_t>();
    snap.root_meta.mtime_nsec = *nsec;
    if (!m.at("xattrs").is_array() || !j.at("differs").is_boolean()) return bad;
    for (const auto& x : m.at("xattrs")) {
      if (!x.is_array() || x.size() != 2) return bad;
      auto name = HexDecode(x.at(0).get<std::string>());
      auto value = HexDecode(x.at(1).get<std::string>());
      if (!name || !value) return bad;
      snap.root_meta.xattrs.emplace_back(*name, *value);
    }
    snap.differs = j.at("differs").get<bool>();
    return snap;
  } catch (const nlohmann::json::exception&) {
    return bad;
  }
}

nlohmann::ordered_json ErrorReplyJson(const Status& s) {
  const char* code = s.IsConflict()                               ? "conflict"
                     : s.code() == Status::Code::kInvalidArgument ? "invalid"
                     : s.IsCorruption()                           ? "damaged"
                                                                  : "failed";
  return {{"error", s.message()}, {"code", code}};
}

}  // namespace strata::control
