// Every encoding and decoding of the control protocol (protocol.h).
#include "control/protocol.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "control/json_fields.h"
#include "util/hex.h"

namespace strata::control {
namespace {

// The wire names of the requests, in the order of DaemonRequest's alternatives.
constexpr const char* kOpNames[] = {"stats", "commit", "snapshot", "reset", "rebase", "progress"};
// ConflictChoice by its value.
constexpr std::string_view kChoiceNames[] = {"ours", "theirs", "both"};
static_assert(std::size(kOpNames) == std::variant_size_v<DaemonRequest>);
static_assert(std::variant_size_v<DaemonReply> == std::variant_size_v<DaemonRequest>);

std::string Dump(const Json& j) {
  // Messages and paths are bytes a user chose: anything that is not UTF-8 is replaced.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Json IdOrNull(const std::optional<Hash>& id) { return id ? Json(id->ToHex()) : Json(); }

Json ToJson(const CommitStats& s) {
  return {{"changed_inodes", s.changed_inodes}, {"directories_written", s.directories_written},
          {"files_captured", s.files_captured}, {"bytes_hashed", s.bytes_hashed},
          {"objects_written", s.objects_written}, {"cut_ms", s.cut_ms},
          {"capture_ms", s.capture_ms},         {"trees_ms", s.trees_ms},
          {"publish_ms", s.publish_ms},         {"rebase_ms", s.rebase_ms}};
}

CommitStats ReadCommitStats(FieldReader r) {
  CommitStats s;
  s.changed_inodes = r.Unsigned("changed_inodes");
  s.directories_written = r.Unsigned("directories_written");
  s.files_captured = r.Unsigned("files_captured");
  s.bytes_hashed = r.Unsigned("bytes_hashed");
  s.objects_written = r.Unsigned("objects_written");
  s.cut_ms = r.Number("cut_ms");
  s.capture_ms = r.Number("capture_ms");
  s.trees_ms = r.Number("trees_ms");
  s.publish_ms = r.Number("publish_ms");
  s.rebase_ms = r.Number("rebase_ms");
  r.Finish();
  return s;
}

Json ToJson(const StoreReadCounters& s) {
  Json backend = Json::object();
  for (const auto& [name, value] : s.backend) backend[name] = value;
  return {{"objects", s.objects},     {"bytes_stored", s.bytes_stored},   {"bytes_verified", s.bytes_verified},
          {"lookup_us", s.lookup_us}, {"pread_us", s.pread_us},           {"decode_us", s.decode_us},
          {"frames_decoded", s.frames_decoded}, {"range_reads", s.range_reads},
          {"fast_checked_bytes", s.fast_checked_bytes}, {"sha256_checked_bytes", s.sha256_checked_bytes},
          {"max_in_flight", s.max_in_flight}, {"backend", std::move(backend)}};
}

// A JSON object whose names the sender chose, each holding an unsigned integer.
std::vector<std::pair<std::string, uint64_t>> ReadNamedCounts(FieldReader& r, const char* key) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const auto& [name, value] : r.Map(key).items()) {
    if (!value.is_number_unsigned()) r.Fail(std::string(key) + "." + name, "is not an unsigned integer");
    else out.emplace_back(name, value.get<uint64_t>());
  }
  return out;
}

StoreReadCounters ReadStoreCounters(FieldReader r) {
  StoreReadCounters s;
  s.objects = r.Unsigned("objects");
  s.bytes_stored = r.Unsigned("bytes_stored");
  s.bytes_verified = r.Unsigned("bytes_verified");
  s.lookup_us = r.Unsigned("lookup_us");
  s.pread_us = r.Unsigned("pread_us");
  s.decode_us = r.Unsigned("decode_us");
  s.frames_decoded = r.Unsigned("frames_decoded");
  s.range_reads = r.Unsigned("range_reads");
  s.fast_checked_bytes = r.Unsigned("fast_checked_bytes");
  s.sha256_checked_bytes = r.Unsigned("sha256_checked_bytes");
  s.max_in_flight = r.Unsigned("max_in_flight");
  s.backend = ReadNamedCounts(r, "backend");
  r.Finish();
  return s;
}

Json ToJson(const WorkspaceCounters::ReadPath& p) {
  return {{"demands", p.demands},
          {"fetches", p.fetches},
          {"fetch_errors", p.fetch_errors},
          {"fetches_in_flight_max", p.fetches_in_flight_max},
          {"readahead_issued", p.readahead_issued},
          {"readahead_used", p.readahead_used},
          {"readahead_wasted", p.readahead_wasted},
          {"readahead_skipped", p.readahead_skipped},
          {"cache_bytes", p.cache_bytes},
          {"cache_capacity", p.cache_capacity},
          {"store", ToJson(p.store)}};
}

WorkspaceCounters::ReadPath ReadReadPath(FieldReader r) {
  WorkspaceCounters::ReadPath p;
  p.demands = r.Unsigned("demands");
  p.fetches = r.Unsigned("fetches");
  p.fetch_errors = r.Unsigned("fetch_errors");
  p.fetches_in_flight_max = r.Unsigned("fetches_in_flight_max");
  p.readahead_issued = r.Unsigned("readahead_issued");
  p.readahead_used = r.Unsigned("readahead_used");
  p.readahead_wasted = r.Unsigned("readahead_wasted");
  p.readahead_skipped = r.Unsigned("readahead_skipped");
  p.cache_bytes = r.Unsigned("cache_bytes");
  p.cache_capacity = r.Unsigned("cache_capacity");
  p.store = ReadStoreCounters(r.Object("store"));
  r.Finish();
  return p;
}

WorkspaceCounters ReadWorkspaceCounters(FieldReader r) {
  WorkspaceCounters c;
  c.changed_paths = r.Unsigned("changed_paths");
  c.batches_committed = r.Unsigned("batches_committed");
  c.operations_committed = r.Unsigned("operations_committed");
  c.commit_us_total = r.Unsigned("commit_us_total");
  c.commit_us_max = r.Unsigned("commit_us_max");
  c.syncs = r.Unsigned("syncs");
  c.bytes_written = r.Unsigned("bytes_written");
  c.bytes_read = r.Unsigned("bytes_read");
  c.directories_loaded = r.Unsigned("directories_loaded");
  c.data_files_to_delete = r.Unsigned("data_files_to_delete");
  FieldReader cache = r.Object("chunk_cache");
  c.chunk_cache_hits = cache.Unsigned("hits");
  c.chunk_cache_misses = cache.Unsigned("misses");
  c.chunk_cache_waits = cache.Unsigned("waits");
  cache.Finish();
  c.read_path = ReadReadPath(r.Object("read_path"));
  r.Finish();
  return c;
}

// A latency bucket's name "<N": N a power of two above the bucket before.
std::optional<uint64_t> BucketBound(std::string_view name, uint64_t previous) {
  uint64_t n = 0;
  if (name.size() < 2 || name[0] != '<') return std::nullopt;
  auto [end, err] = std::from_chars(name.data() + 1, name.data() + name.size(), n);
  if (err != std::errc() || end != name.data() + name.size() || n == 0 || (n & (n - 1)) != 0 || n <= previous)
    return std::nullopt;
  return n;
}

StatsReply ReadStats(FieldReader& r) {
  StatsReply s;
  for (const auto& [name, value] : r.Map("operations").items()) {
    FieldReader o = r.Child(value, "operations." + name);
    OperationCounters op{name, o.Unsigned("count"), o.Unsigned("errors"), {}};
    uint64_t previous = 0;
    for (const auto& [bucket, n] : o.Map("latency_us").items()) {
      auto bound = BucketBound(bucket, previous);
      if (!bound) o.Fail("latency_us." + bucket, "is not a bucket \"<N\" (N a power of two, increasing)");
      else if (!n.is_number_unsigned()) o.Fail("latency_us." + bucket, "is not an unsigned integer");
      else op.latency_us.emplace_back(previous = *bound, n.get<uint64_t>());
    }
    o.Finish();
    s.operations.push_back(std::move(op));
  }
  s.workspace = ReadWorkspaceCounters(r.Object("workspace"));
  FieldReader loop = r.Object("request_loop");
  s.request_loop = {loop.Unsigned("inline_requests"), loop.Unsigned("worker_requests"),
                    loop.Unsigned("caught_polling"), loop.Unsigned("sleeps")};
  loop.Finish();
  s.transport = r.String("transport");
  FieldReader pt = r.Object("passthrough");
  s.passthrough = {pt.Bool("on"), pt.Unsigned("opens"), pt.Unsigned("write_opens"), pt.Unsigned("declined"),
                   pt.Unsigned("held")};
  pt.Finish();
  return s;
}

CommitReply ReadCommit(FieldReader& r) {
  CommitReply c;
  c.commit = r.IdOrNull("commit");
  c.branch = r.String("branch");
  c.stats = ReadCommitStats(r.Object("stats"));
  return c;
}

SnapshotReply ReadSnapshot(FieldReader& r) {
  SnapshotReply s;
  s.base = r.IdOrNull("base");
  s.root = r.Id("root");
  FieldReader m = r.Object("root_meta");
  s.root_meta.mode = m.Unsigned32("mode");
  s.root_meta.uid = m.Unsigned32("uid");
  s.root_meta.gid = m.Unsigned32("gid");
  s.root_meta.mtime_sec = m.Signed("mtime_sec");
  s.root_meta.mtime_nsec = m.Unsigned32("mtime_nsec");
  for (const Json& x : m.Array("xattrs")) {
    // [name, value], both hex: they are bytes.
    std::optional<std::string> name, value;
    if (x.is_array() && x.size() == 2 && x[0].is_string() && x[1].is_string()) {
      name = HexDecode(x[0].get<std::string>());
      value = HexDecode(x[1].get<std::string>());
    }
    if (!name || !value) {
      m.Fail("xattrs", "holds an entry that is not [hex name, hex value]");
      break;
    }
    s.root_meta.xattrs.emplace_back(std::move(*name), std::move(*value));
  }
  m.Finish();
  s.differs = r.Bool("differs");
  s.stats = ReadCommitStats(r.Object("stats"));
  return s;
}

ResetReply ReadReset(FieldReader& r) {
  ResetReply s;
  s.base = r.Id("base");
  s.content_replaced = r.Bool("content_replaced");
  s.differs = r.Bool("differs");
  return s;
}

RebaseReply ReadRebase(FieldReader& r) {
  RebaseReply s;
  s.onto = r.Id("onto");
  s.up_to_date = r.Bool("up_to_date");
  size_t i = 0;
  for (const Json& c : r.Array("conflicts")) {
    FieldReader f = r.Child(c, "conflicts[" + std::to_string(i++) + "]");
    s.conflicts.push_back(MergeConflict{f.String("path"), f.String("reason")});
    f.Finish();
  }
  s.root = r.IdOrNull("root");
  s.differs = r.Bool("differs");
  return s;
}

ProgressReply ReadProgress(FieldReader& r) {
  ProgressReply p;
  const std::string phase = r.String("phase");
  bool known = false;
  for (int i = 0; i <= static_cast<int>(CommitPhase::kDone) && !known; i++)
    if (phase == CommitPhaseName(static_cast<CommitPhase>(i))) {
      p.phase = static_cast<CommitPhase>(i);
      known = true;
    }
  if (!known) r.Fail("phase", "is not a phase this strata knows");
  p.files_done = r.Unsigned("files_done");
  p.files_total = r.Unsigned("files_total");
  p.bytes_done = r.Unsigned("bytes_done");
  p.bytes_total = r.Unsigned("bytes_total");
  return p;
}

Json ErrorJson(const Status& s) {
  const char* code = s.IsConflict()                               ? "conflict"
                     : s.code() == Status::Code::kInvalidArgument ? "invalid"
                     : s.IsCorruption()                           ? "damaged"
                                                                  : "failed";
  return {{"error", s.message()}, {"code", code}};
}

Status ReadError(FieldReader& r) {
  const std::string message = r.String("error"), code = r.String("code");
  if (code == "conflict") return Status::Conflict(message);
  if (code == "invalid") return Status::InvalidArgument(message);
  if (code == "damaged") return Status::Corruption(message);
  if (code != "failed") r.Fail("code", "is not one this strata knows");
  return Status::IOErrorWithMessage(message, EIO);
}

}  // namespace

bool IsReadOnly(const DaemonRequest& request) {
  return std::holds_alternative<StatsRequest>(request) || std::holds_alternative<ProgressRequest>(request);
}

ResetReply ResetReplyOf(const Hash& commit, const ResetOutcome& outcome) {
  return {commit, outcome.content_replaced, outcome.differs};
}

RebaseReply RebaseReplyOf(const Hash& onto, const RebaseOutcome& outcome) {
  const bool rebased = !outcome.up_to_date && outcome.conflicts.empty();
  return {onto, outcome.up_to_date, outcome.conflicts, rebased ? std::optional<Hash>(outcome.root) : std::nullopt,
          outcome.differs};
}

Json ToJson(const CommitReply& c) {
  return {{"commit", IdOrNull(c.commit)}, {"branch", c.branch}, {"stats", ToJson(c.stats)}};
}

Json ToJson(const SnapshotReply& s) {
  Json xattrs = Json::array();
  for (const auto& [name, value] : s.root_meta.xattrs) xattrs.push_back({HexEncode(name), HexEncode(value)});
  const RootMeta& m = s.root_meta;
  return {{"base", IdOrNull(s.base)},
          {"root", s.root.ToHex()},
          {"root_meta",
           {{"mode", m.mode}, {"uid", m.uid}, {"gid", m.gid}, {"mtime_sec", m.mtime_sec},
            {"mtime_nsec", m.mtime_nsec}, {"xattrs", std::move(xattrs)}}},
          {"differs", s.differs},
          {"stats", ToJson(s.stats)}};
}

Json ToJson(const ResetReply& r) {
  return {{"base", r.base.ToHex()}, {"content_replaced", r.content_replaced}, {"differs", r.differs}};
}

Json ToJson(const RebaseReply& r) {
  Json conflicts = Json::array();
  for (const MergeConflict& c : r.conflicts) conflicts.push_back({{"path", c.path}, {"reason", c.reason}});
  return {{"onto", r.onto.ToHex()},
          {"up_to_date", r.up_to_date},
          {"conflicts", std::move(conflicts)},
          {"root", IdOrNull(r.root)},
          {"differs", r.differs}};
}

Json ToJson(const ProgressReply& p) {
  return {{"phase", CommitPhaseName(p.phase)}, {"files_done", p.files_done}, {"files_total", p.files_total},
          {"bytes_done", p.bytes_done}, {"bytes_total", p.bytes_total}};
}

Json ToJson(const std::vector<OperationCounters>& operations) {
  Json j = Json::object();
  for (const OperationCounters& op : operations) {
    Json latency = Json::object();
    for (const auto& [below, n] : op.latency_us) latency["<" + std::to_string(below)] = n;
    j[op.name] = {{"count", op.count}, {"errors", op.errors}, {"latency_us", std::move(latency)}};
  }
  return j;
}

Json ToJson(const WorkspaceCounters& c) {
  return {{"changed_paths", c.changed_paths},
          {"batches_committed", c.batches_committed},
          {"operations_committed", c.operations_committed},
          {"commit_us_total", c.commit_us_total},
          {"commit_us_max", c.commit_us_max},
          {"syncs", c.syncs},
          {"bytes_written", c.bytes_written},
          {"bytes_read", c.bytes_read},
          {"directories_loaded", c.directories_loaded},
          {"data_files_to_delete", c.data_files_to_delete},
          {"chunk_cache", {{"hits", c.chunk_cache_hits}, {"misses", c.chunk_cache_misses}, {"waits", c.chunk_cache_waits}}},
          {"read_path", ToJson(c.read_path)}};
}

Json ToJson(const RequestLoopCounters& l) {
  return {{"inline_requests", l.inline_requests}, {"worker_requests", l.worker_requests},
          {"caught_polling", l.caught_polling}, {"sleeps", l.sleeps}};
}

Json ToJson(const PassthroughCounters& p) {
  return {{"on", p.on}, {"opens", p.opens}, {"write_opens", p.write_opens}, {"declined", p.declined}, {"held", p.held}};
}

std::string EncodeRequest(const DaemonRequest& request) {
  Json j{{"op", kOpNames[request.index()]}};
  if (const auto* c = std::get_if<CommitRequest>(&request)) {
    j["message"] = c->message;
    j["author"] = c->author;
    j["branch"] = c->branch;
  } else if (const auto* r = std::get_if<ResetRequest>(&request)) {
    j["commit"] = r->commit.ToHex();
    j["hard"] = r->hard;
  } else if (const auto* b = std::get_if<RebaseRequest>(&request)) {
    j["commit"] = b->onto.ToHex();
    Json choose = Json::object();
    for (const auto& [path, choice] : b->choices) choose[path] = kChoiceNames[static_cast<int>(choice)];
    j["choose"] = std::move(choose);
  }
  return Dump(j);
}

Result<DaemonRequest> DecodeRequest(std::string_view line) {
  const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  std::string problem;
  FieldReader r(j, "", &problem);
  const std::string op = r.String("op");
  if (!problem.empty()) return Status::InvalidArgument("request: " + problem);
  DaemonRequest request;
  if (op == "stats") {
    request = StatsRequest{};
  } else if (op == "commit") {
    request = CommitRequest{r.String("message"), r.String("author"), r.String("branch")};
  } else if (op == "snapshot") {
    request = SnapshotRequest{};
  } else if (op == "progress") {
    request = ProgressRequest{};
  } else if (op == "reset") {
    ResetRequest reset;  // fields in the order the wire names them, whatever the struct's
    reset.commit = r.Id("commit");
    reset.hard = r.Bool("hard");
    request = reset;
  } else if (op == "rebase") {
    RebaseRequest rebase{r.Id("commit"), {}};
    for (const auto& [path, value] : r.Map("choose").items()) {
      const std::string name = value.is_string() ? value.get<std::string>() : "";
      const auto* known = std::find(std::begin(kChoiceNames), std::end(kChoiceNames), name);
      if (known == std::end(kChoiceNames)) {
        r.Fail("choose." + path, "is not \"ours\", \"theirs\" or \"both\"");
        break;
      }
      rebase.choices[path] = static_cast<ConflictChoice>(known - std::begin(kChoiceNames));
    }
    request = std::move(rebase);
  } else {
    return Status::InvalidArgument("unknown request '" + op + "'");
  }
  r.Finish();
  if (!problem.empty()) return Status::InvalidArgument(op + " request: " + problem);
  return request;
}

std::string EncodeReply(const Result<DaemonReply>& reply) {
  if (!reply.ok()) return Dump(ErrorJson(reply.status()));
  return Dump(std::visit(
      [](const auto& r) -> Json {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, StatsReply>) {
          return {{"operations", ToJson(r.operations)},
                  {"workspace", ToJson(r.workspace)},
                  {"request_loop", ToJson(r.request_loop)},
                  {"transport", r.transport},
                  {"passthrough", ToJson(r.passthrough)}};
        } else {
          return ToJson(r);
        }
      },
      *reply));
}

Result<DaemonReply> DecodeReply(const DaemonRequest& request, std::string_view line) {
  const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  std::string problem;
  FieldReader r(j, "", &problem);
  std::optional<Status> error;
  DaemonReply reply;
  if (j.is_object() && j.contains("error")) {
    error = ReadError(r);
  } else {
    switch (request.index()) {
      case 0: reply = ReadStats(r); break;
      case 1: reply = ReadCommit(r); break;
      case 2: reply = ReadSnapshot(r); break;
      case 3: reply = ReadReset(r); break;
      case 4: reply = ReadRebase(r); break;
      case 5: reply = ReadProgress(r); break;
    }
  }
  r.Finish();
  if (!problem.empty())
    return Status::Corruption(std::string("the daemon's reply to ") + kOpNames[request.index()] +
                              " is not what this strata reads: " + problem);
  if (error) return *error;
  return reply;
}

Result<DaemonReply> DecodeReplyOrStop(const DaemonRequest& request, std::string_view bytes) {
  // The daemon ends every reply with a newline before it closes the
  // connection: without one, it stopped (was killed) while serving the
  // request. That says nothing about the store, so it is no Corruption.
  if (!bytes.ends_with('\n')) return Status::Unavailable(kDaemonStoppedMessage);
  bytes.remove_suffix(1);
  return DecodeReply(request, bytes);
}

}  // namespace strata::control
