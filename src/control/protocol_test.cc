// The control protocol's typed messages: every request and reply survives
// its encoding, and hostile or foreign bytes are refused with an error that
// names the field, never read as a wrong value.
#include "control/protocol.h"

#include <gtest/gtest.h>

#include "control/socket.h"
#include "testing/store_test_util.h"
#include "util/hash.h"

namespace strata::control {
namespace {

const Hash kId = Sha256::Of("c", 1);
const Hash kOther = Sha256::Of("d", 1);

template <typename T>
T DecodeAs(const DaemonRequest& request, const std::string& line) {
  auto r = DecodeReply(request, line);
  EXPECT_TRUE(r.ok()) << r.status().message() << " in " << line;
  if (!r.ok()) return T{};
  EXPECT_TRUE(std::holds_alternative<T>(*r));
  return std::get<T>(*r);
}

std::string Encoded(const DaemonReply& reply) { return EncodeReply(Result<DaemonReply>(reply)); }

// The reply's line with one field replaced (or removed, for a null value): a
// JSON pointer names the field.
std::string Edited(const std::string& line, const std::string& pointer, const nlohmann::ordered_json* value) {
  auto j = nlohmann::ordered_json::parse(line);
  nlohmann::ordered_json::json_pointer p(pointer);
  if (value == nullptr) {
    j[p.parent_pointer()].erase(p.back());
  } else {
    j[p] = *value;
  }
  return j.dump();
}

Status RefusedReply(const DaemonRequest& request, const std::string& line) {
  auto r = DecodeReply(request, line);
  if (r.ok()) return Status::Ok();
  return r.status();
}

TEST(ProtocolTest, EveryRequestSurvivesItsEncoding) {
  const DaemonRequest requests[] = {StatsRequest{}, CommitRequest{"two\nlines", "someone@host", "team/main"},
                                    SnapshotRequest{}, ResetRequest{kId, true}, ResetRequest{kOther, false},
                                    RebaseRequest{kId, {}},
                                    RebaseRequest{kOther, {{"a/f", ConflictChoice::kOurs},
                                                           {"b", ConflictChoice::kTheirs},
                                                           {"", ConflictChoice::kBoth}}},
                                    ProgressRequest{}};
  for (const DaemonRequest& request : requests) {
    const std::string line = EncodeRequest(request);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    auto back = DecodeRequest(line);
    ASSERT_TRUE(back.ok()) << back.status().message() << " in " << line;
    ASSERT_EQ(back->index(), request.index()) << line;
    EXPECT_EQ(EncodeRequest(*back), line);
  }
  auto commit = DecodeRequest(EncodeRequest(requests[1]));
  ASSERT_TRUE(commit.ok());
  const auto& c = std::get<CommitRequest>(*commit);
  EXPECT_EQ(c.message, "two\nlines");
  EXPECT_EQ(c.author, "someone@host");
  EXPECT_EQ(c.branch, "team/main");
  auto reset = DecodeRequest(EncodeRequest(requests[3]));
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(std::get<ResetRequest>(*reset).commit, kId);
  EXPECT_TRUE(std::get<ResetRequest>(*reset).hard);
  auto rebase = DecodeRequest(EncodeRequest(requests[5]));
  ASSERT_TRUE(rebase.ok());
  EXPECT_EQ(std::get<RebaseRequest>(*rebase).onto, kId);
  auto chosen = DecodeRequest(EncodeRequest(requests[6]));
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(std::get<RebaseRequest>(*chosen).choices, std::get<RebaseRequest>(requests[6]).choices);
}

TEST(ProtocolTest, AHostileRequestIsRefusedNamingWhatIsWrong) {
  const std::string id = kId.ToHex();
  const std::pair<std::string, std::string> cases[] = {
      {"", "not a JSON object"},
      {"[1]", "not a JSON object"},
      {R"({"op": 5})", "'op' is not a string"},
      {R"({})", "'op' is missing"},
      {R"({"op": "format"})", "unknown request 'format'"},
      {R"({"op": "stats", "verbose": true})", "'verbose' is not one this strata knows"},
      {R"({"op": "commit", "message": "m", "author": "a"})", "'branch' is missing"},
      {R"({"op": "commit", "message": 1, "author": "a", "branch": ""})", "'message' is not a string"},
      {R"({"op": "reset", "commit": ")" + id + R"("})", "'hard' is missing"},
      {R"({"op": "reset", "commit": ")" + id + R"(", "hard": 1})", "'hard' is not true or false"},
      {R"({"op": "reset", "commit": ")" + id.substr(2) + R"(", "hard": true})", "'commit' is not an id"},
      {R"({"op": "rebase", "commit": null})", "'commit' is not an id"},
      {R"({"op": "rebase", "commit": ")" + id + R"(", "choose": {}, "hard": true})",
       "'hard' is not one this strata knows"},
      {R"({"op": "rebase", "commit": ")" + id + R"("})", "'choose' is missing"},
      {R"({"op": "rebase", "commit": ")" + id + R"(", "choose": {"a": "mine"}})", "'choose.a' is not \"ours\""},
      {R"({"op": "rebase", "commit": ")" + id + R"(", "choose": {"a": 1}})", "'choose.a' is not \"ours\""},
      {R"({"op": "rebase", "commit": ")" + id + R"(", "choose": []})", "'choose'"},
  };
  for (const auto& [line, why] : cases) {
    auto r = DecodeRequest(line);
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << line;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message() << " for " << line;
  }
}

StatsReply SomeStats() {
  StatsReply s;
  s.operations = {{"lookup", 7, 1, {{1, 2}, {4, 5}}}, {"write", 2, 0, {{1024, 2}}}};
  s.workspace.changed_paths = 3;
  s.workspace.commit_us_max = 99;
  s.workspace.data_files_to_delete = 4;
  s.workspace.chunk_cache_waits = 6;
  s.workspace.read_path.readahead_skipped = 8;
  s.workspace.read_path.store.decode_us = 12;
  s.workspace.read_path.store.backend = {{"cache_misses", 2}, {"fetched_bytes", 100}};
  s.request_loop = {10, 11, 12, 13};
  s.transport = "strata";
  return s;
}

TEST(ProtocolTest, EveryReplySurvivesItsEncoding) {
  const StatsReply stats = SomeStats();
  const std::string stats_line = Encoded(stats);
  const auto s = DecodeAs<StatsReply>(StatsRequest{}, stats_line);
  EXPECT_EQ(Encoded(s), stats_line);
  ASSERT_EQ(s.operations.size(), 2u);
  EXPECT_EQ(s.operations[0].name, "lookup");
  EXPECT_EQ(s.operations[0].errors, 1u);
  EXPECT_EQ(s.operations[0].latency_us, (std::vector<std::pair<uint64_t, uint64_t>>{{1, 2}, {4, 5}}));
  EXPECT_EQ(s.workspace.data_files_to_delete, 4u);
  EXPECT_EQ(s.workspace.read_path.store.backend, stats.workspace.read_path.store.backend);
  EXPECT_EQ(s.request_loop.sleeps, 13u);
  EXPECT_EQ(s.transport, "strata");

  CommitReply commit{kId, "main", {}};
  commit.stats.bytes_hashed = 5;
  commit.stats.cut_ms = 1.5;
  const auto c = DecodeAs<CommitReply>(CommitRequest{}, Encoded(commit));
  EXPECT_EQ(c.commit, kId);
  EXPECT_EQ(c.branch, "main");
  EXPECT_EQ(c.stats.bytes_hashed, 5u);
  EXPECT_EQ(c.stats.cut_ms, 1.5);
  EXPECT_FALSE(DecodeAs<CommitReply>(CommitRequest{}, Encoded(CommitReply{})).commit);

  SnapshotReply snap;
  snap.base = kId;
  snap.root = kOther;
  snap.root_meta = {0700, 1000, 100, -5, 999'999'999, {{"user.a", std::string("\0\xff", 2)}}};
  snap.differs = true;
  const auto sn = DecodeAs<SnapshotReply>(SnapshotRequest{}, Encoded(snap));
  EXPECT_EQ(sn.base, kId);
  EXPECT_EQ(sn.root, kOther);
  EXPECT_EQ(sn.root_meta, snap.root_meta);
  EXPECT_TRUE(sn.differs);

  const auto r = DecodeAs<ResetReply>(ResetRequest{}, Encoded(ResetReply{kId, true, false}));
  EXPECT_EQ(r.base, kId);
  EXPECT_TRUE(r.content_replaced);
  EXPECT_FALSE(r.differs);

  const RebaseReply rebase{kId, false, {{"a/b", "changed on both sides"}, {"", "top"}}, std::nullopt, true};
  const auto b = DecodeAs<RebaseReply>(RebaseRequest{}, Encoded(rebase));
  EXPECT_EQ(b.onto, kId);
  EXPECT_EQ(b.conflicts, rebase.conflicts);
  EXPECT_FALSE(b.root);
  EXPECT_TRUE(b.differs);
  EXPECT_EQ(DecodeAs<RebaseReply>(RebaseRequest{}, Encoded(RebaseReply{kId, false, {}, kOther, false})).root, kOther);
}

// Each phase by its name, and counts past 32 bits: a commit of many large files.
TEST(ProtocolTest, AProgressReplySurvivesItsEncodingInEveryPhase) {
  const uint64_t big = (uint64_t{1} << 40) + 3;
  for (int i = 0; i <= static_cast<int>(CommitPhase::kDone); i++) {
    const ProgressReply sent{static_cast<CommitPhase>(i), 7, 21, big - 1, big};
    const std::string line = Encoded(sent);
    EXPECT_NE(line.find(std::string("\"phase\":\"") + CommitPhaseName(sent.phase) + "\""), std::string::npos) << line;
    const auto back = DecodeAs<ProgressReply>(ProgressRequest{}, line);
    EXPECT_EQ(back.phase, sent.phase) << line;
    EXPECT_EQ(back.files_done, 7u);
    EXPECT_EQ(back.files_total, 21u);
    EXPECT_EQ(back.bytes_done, big - 1);
    EXPECT_EQ(back.bytes_total, big);
    EXPECT_EQ(Encoded(back), line);
  }
  EXPECT_TRUE(IsReadOnly(ProgressRequest{}));
  EXPECT_TRUE(IsReadOnly(StatsRequest{}));
  EXPECT_FALSE(IsReadOnly(CommitRequest{}));
  EXPECT_FALSE(IsReadOnly(SnapshotRequest{}));
}

TEST(ProtocolTest, AProgressMessageOfAnotherStrataIsRefusedNamingTheField) {
  const std::string line = Encoded(ProgressReply{CommitPhase::kCapture, 1, 2, 3, 4});
  const nlohmann::ordered_json minus = -1, unknown_phase = "squash", number = 2, yes = true;
  const std::pair<std::string, std::string> cases[] = {
      {Edited(line, "/phase", &unknown_phase), "'phase' is not a phase this strata knows"},
      {Edited(line, "/phase", &number), "'phase' is not a string"},
      {Edited(line, "/files_done", &minus), "'files_done' is not an unsigned"},
      {Edited(line, "/bytes_total", nullptr), "'bytes_total' is missing"},
      {Edited(line, "/eta_ms", &yes), "'eta_ms' is not one this strata knows"},
      // A stats reply is not the answer to a progress request.
      {Encoded(SomeStats()), "'phase' is missing"},
  };
  for (const auto& [reply, field] : cases) {
    const Status s = RefusedReply(ProgressRequest{}, reply);
    ASSERT_FALSE(s.ok()) << reply;
    EXPECT_TRUE(s.IsCorruption()) << s.message();
    EXPECT_NE(s.message().find(field), std::string::npos) << s.message() << "\nfor " << reply;
  }
  auto request = DecodeRequest(R"({"op": "progress", "commit": "x"})");
  ASSERT_FALSE(request.ok());
  EXPECT_NE(request.status().message().find("'commit' is not one this strata knows"), std::string::npos)
      << request.status().message();
}

TEST(ProtocolTest, AnErrorReplyIsItsStatus) {
  const std::pair<Status, Status::Code> cases[] = {
      {Status::Conflict("head moved"), Status::Code::kConflict},
      {Status::InvalidArgument("no such branch"), Status::Code::kInvalidArgument},
      {Status::Corruption("object x is damaged"), Status::Code::kCorruption},
      {Status::IOError("pwrite", ENOSPC), Status::Code::kIOError}};
  for (const auto& [status, code] : cases) {
    auto r = DecodeReply(CommitRequest{}, EncodeReply(Result<DaemonReply>(status)));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code);
    EXPECT_EQ(r.status().message(), status.message());
  }
  // An error reply is as strict as any other.
  for (const std::string line : {R"({"error": "x", "code": "fatal"})", R"({"error": "x"})",
                                 R"({"error": "x", "code": "failed", "commit": null})", R"({"error": 3, "code": "failed"})"}) {
    auto r = DecodeReply(CommitRequest{}, line);
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_TRUE(r.status().IsCorruption()) << line << ": " << r.status().message();
  }
}

TEST(ProtocolTest, AReplyThatIsNotWhatThisStrataReadsIsCorruptionNamingTheField) {
  const nlohmann::ordered_json minus = -1, fraction = 0.5, text = "1", big = uint64_t{1} << 32, yes = true;
  const std::string stats = Encoded(SomeStats());
  const std::string snap = Encoded(SnapshotReply{});
  const std::string rebase = Encoded(RebaseReply{kId, false, {{"p", "r"}}, std::nullopt, false});
  const std::string commit = Encoded(CommitReply{});
  struct Case {
    DaemonRequest request;
    std::string line;
    std::string field;
  };
  const Case cases[] = {
      {StatsRequest{}, Edited(stats, "/workspace/syncs", &minus), "'workspace.syncs' is not an unsigned"},
      {StatsRequest{}, Edited(stats, "/workspace/syncs", &fraction), "'workspace.syncs' is not an unsigned"},
      {StatsRequest{}, Edited(stats, "/workspace/read_path/store/objects", nullptr),
       "'workspace.read_path.store.objects' is missing"},
      {StatsRequest{}, Edited(stats, "/workspace/chunk_cache/evictions", &yes),
       "'workspace.chunk_cache.evictions' is not one this strata knows"},
      {StatsRequest{}, Edited(stats, "/operations/lookup/latency_us/<3", &big), "not a bucket"},
      {StatsRequest{}, Edited(stats, "/operations/lookup/latency_us/<1", &text), "is not an unsigned"},
      {StatsRequest{}, Edited(stats, "/workspace/read_path/store/backend/cache_hits", &minus),
       "backend.cache_hits' is not an unsigned"},
      {StatsRequest{}, Edited(stats, "/request_loop", nullptr), "'request_loop' is missing"},
      {StatsRequest{}, Edited(stats, "/transport", nullptr), "'transport' is missing"},
      {SnapshotRequest{}, Edited(snap, "/root_meta/uid", &big), "'root_meta.uid' is out of range"},
      {SnapshotRequest{}, Edited(snap, "/root_meta/mtime_sec", &fraction), "'root_meta.mtime_sec' is not a 64-bit"},
      {SnapshotRequest{}, Edited(snap, "/root", &text), "'root' is not an id"},
      {SnapshotRequest{}, Edited(snap, "/root_meta/xattrs", &text), "'root_meta.xattrs' is not an array"},
      {RebaseRequest{}, Edited(rebase, "/conflicts/0/path", nullptr), "'conflicts[0].path' is missing"},
      {RebaseRequest{}, Edited(rebase, "/up_to_date", &text), "'up_to_date' is not true or false"},
      {CommitRequest{}, Edited(commit, "/stats/cut_ms", &text), "'stats.cut_ms' is not a finite number"},
      {CommitRequest{}, "{\"commit\": 5}", "'commit' is not an id"},
      {CommitRequest{}, "", "the message is not a JSON object"},
      // The reply to another request is not this one's.
      {CommitRequest{}, Encoded(ResetReply{kId, false, false}), "'commit' is missing"},
  };
  for (const Case& c : cases) {
    const Status s = RefusedReply(c.request, c.line);
    ASSERT_FALSE(s.ok()) << c.line;
    EXPECT_TRUE(s.IsCorruption()) << s.message();
    EXPECT_NE(s.message().find(c.field), std::string::npos) << s.message() << "\nfor " << c.line;
  }
  // Xattr bytes that are not hex are refused, not decoded to something else.
  SnapshotReply x;
  x.root_meta.xattrs = {{"user.a", "b"}};
  nlohmann::ordered_json bad = nlohmann::ordered_json::array({"zz", "00"});
  nlohmann::ordered_json list = nlohmann::ordered_json::array({bad});
  EXPECT_FALSE(RefusedReply(SnapshotRequest{}, Edited(Encoded(x), "/root_meta/xattrs", &list)).ok());
}

TEST(ControlSocketTest, ATypedRequestGetsItsTypedReplyOverTheSocket) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/control.sock";
  std::vector<size_t> seen;
  ControlSocket socket(path, [&](const DaemonRequest& request) -> Result<DaemonReply> {
    seen.push_back(request.index());
    if (const auto* reset = std::get_if<ResetRequest>(&request))
      return DaemonReply(ResetReply{reset->commit, reset->hard, !reset->hard});
    if (std::holds_alternative<RebaseRequest>(request)) return Status::Conflict("head moved");
    return DaemonReply(SomeStats());
  });
  ASSERT_TRUE(socket.Start().ok());
  auto reset = Ask(path, ResetRequest{kId, true});
  ASSERT_TRUE(reset.ok()) << reset.status().message();
  EXPECT_EQ(reset->base, kId);
  EXPECT_TRUE(reset->content_replaced);
  auto stats = Ask(path, StatsRequest{});
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->request_loop.caught_polling, 12u);
  auto rebase = Ask(path, RebaseRequest{kId});
  ASSERT_FALSE(rebase.ok());
  EXPECT_TRUE(rebase.status().IsConflict());
  EXPECT_EQ(rebase.status().message(), "head moved");
  socket.Stop();
  EXPECT_EQ(seen, (std::vector<size_t>{3, 0, 4}));
}

}  // namespace
}  // namespace strata::control
