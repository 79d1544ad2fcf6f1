// Forgetting commits and collecting what only they held (forget.h): the
// forgotten commits' own chunks go, everything kept reads back unchanged,
// fsck stays clean, and reading a forgotten commit says what happened.
#include "store/forget.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>

#include "store/fsck.h"
#include "store/gc.h"
#include "store/index.h"
#include "store/revision.h"
#include "store/store_test_fixture.h"
#include "testing/store_test_util.h"
#include "testing/tree_test_util.h"

namespace strata {
namespace {

constexpr int64_t kDayNs = int64_t{86400} * 1'000'000'000;
constexpr int64_t kFirstDayNs = int64_t{1704110400} * 1'000'000'000;  // 2024-01-01 12:00 UTC

class ForgetTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    if (HasFatalFailure()) return;
    store_->SetPackMerging(false);
  }

  // The bytes only day `day` has, and those every day shares.
  static std::string DayBytes(int day) { return testing::RandomBytes(20000, 1000 + day); }
  static std::string CommonBytes() { return testing::RandomBytes(30000, 7); }

  // A commit on `branch` made on day `day` (0: 2024-01-01): files "day" and "common".
  Hash CommitDay(const std::string& branch, int day) {
    auto head = store_->GetRef(branch);
    EXPECT_TRUE(head.ok());
    auto session = store_->BeginWrite();
    EXPECT_TRUE(session.ok());
    std::vector<TreeEntry> entries;
    for (const auto& [name, data] : {std::pair<std::string, std::string>{"day", DayBytes(day)},
                                     std::pair<std::string, std::string>{"common", CommonBytes()}}) {
      TreeEntry e;
      e.name = name;
      e.kind = EntryKind::kFile;
      e.mode = 0644;
      auto put = store_->Put(ObjectType::kChunk, data);
      EXPECT_TRUE(put.ok());
      e.chunks.push_back({put->id, data.size()});
      e.size = data.size();
      entries.push_back(std::move(e));
    }
    Commit c;
    c.root = testing::PutTree(*store_, entries);
    if (*head) c.parents.push_back(**head);
    c.time_ns = kFirstDayNs + day * kDayNs;
    c.message = "day " + std::to_string(day);
    auto commit = store_->Put(ObjectType::kCommit, EncodeCommit(c));
    EXPECT_TRUE(store_->Flush().ok());
    EXPECT_TRUE(store_->CompareAndSwapRef(branch, *head, commit->id).ok());
    return commit->id;
  }

  static Hash ChunkOf(const std::string& data) { return ComputeObjectId(ObjectType::kChunk, data); }

  // The file "day" of commit id, read back through its tree.
  Result<std::string> ReadDayFile(const Hash& id) {
    STRATA_ASSIGN_OR_RETURN(Commit c, store_->GetCommit(id));
    STRATA_ASSIGN_OR_RETURN(TreeEntry e, LookupPath(*store_, c.root, "day"));
    std::string out;
    for (const ChunkRef& ref : e.chunks) {
      STRATA_ASSIGN_OR_RETURN(std::string bytes, store_->Get(ref.id, ObjectType::kChunk));
      out += bytes;
    }
    return out;
  }

  // gc's options with a workspace whose base is `base` (as the CLI gives them).
  static GcOptions WithWorkspaceOn(const Hash& base) {
    GcOptions options;
    options.extra_roots = [base]() -> Result<std::vector<RootSet>> {
      return std::vector<RootSet>{{"workspace w", base, {}, {}}};
    };
    return options;
  }

  static std::set<Hash> Forgotten(const ForgetPlan& plan) { return {plan.forget.begin(), plan.forget.end()}; }
};

TEST_F(ForgetTest, GcAfterForgetFreesOnlyWhatTheForgottenCommitsHeld) {
  std::vector<Hash> day;  // day[i]: the commit of day i on main
  for (int i = 0; i < 10; i++) {
    day.push_back(CommitDay("main", i));
    if (i == 1) {
      ASSERT_TRUE(store_->CompareAndSwapRef("other", std::nullopt, day[1]).ok());
    }
  }
  // A workspace's base (the CLI passes every workspace's): never forgotten.
  ProtectedCommits protect = {{day[4], "base of workspace w"}};
  RetentionPolicy policy;
  policy.last = 3;
  auto plan = PlanForget(*store_, {"main"}, policy, protect);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->branches.size(), 1u);
  const ForgetBranchPlan& main = plan->branches[0];
  EXPECT_EQ(main.branch, "main");
  ASSERT_EQ(main.line.size(), 10u);
  EXPECT_EQ(main.line[0].id, day[9]);
  EXPECT_EQ(main.line[0].reasons, (std::vector<std::string>{"head", "last"}));
  EXPECT_EQ(main.line[5].reasons, (std::vector<std::string>{"base of workspace w"}));
  EXPECT_EQ(main.line[8].reasons, (std::vector<std::string>{"on branch other"}));  // day 1
  EXPECT_EQ(main.line[9].reasons, (std::vector<std::string>{"on branch other"}));  // day 0
  const std::set<Hash> gone = {day[2], day[3], day[5], day[6]};
  EXPECT_EQ(Forgotten(*plan), gone);

  auto recorded = RecordForget(*store_, *plan, [&]() -> Result<ProtectedCommits> { return protect; });
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(*recorded, 4u);
  auto listed = ForgottenCommits(*store_);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(std::set<Hash>(listed->begin(), listed->end()), gone);

  auto gc = CollectGarbage(*store_, WithWorkspaceOn(day[4]));
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  // Each forgotten commit held one chunk and one tree of its own.
  EXPECT_EQ(gc->objects_deleted, 8u);

  for (int i = 0; i < 10; i++) {
    const bool forgotten = gone.count(day[i]) > 0;
    auto chunk = store_->Contains(ChunkOf(DayBytes(i)));
    ASSERT_TRUE(chunk.ok());
    EXPECT_EQ(*chunk, !forgotten) << "day " << i;
    EXPECT_TRUE(store_->GetCommit(day[i]).ok()) << "a forgotten commit object stays, day " << i;
    if (forgotten) continue;
    auto bytes = ReadDayFile(day[i]);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    EXPECT_EQ(*bytes, DayBytes(i)) << "day " << i;
  }
  EXPECT_TRUE(*store_->Contains(ChunkOf(CommonBytes())));

  // Reading a forgotten commit's files says why they are not there.
  auto named = ResolveContentRevision(*store_, day[5].ToHex());
  ASSERT_FALSE(named.ok());
  EXPECT_TRUE(named.status().IsNotFound());
  EXPECT_NE(named.status().message().find("was forgotten by strata forget"), std::string::npos)
      << named.status().message();
  auto by_parent = ResolveContentRevision(*store_, "main~3");  // day 6
  ASSERT_FALSE(by_parent.ok());
  EXPECT_NE(by_parent.status().message().find("forgotten"), std::string::npos);
  auto line_position = ResolveRevision(*store_, "main~3");  // the line itself stays
  ASSERT_TRUE(line_position.ok());
  EXPECT_EQ(*line_position, day[6]);
  EXPECT_TRUE(ResolveContentRevision(*store_, "main~2").ok());

  auto fsck = CheckStore(*store_, {{"workspace w", day[4], {}, {}}}, nullptr);
  ASSERT_TRUE(fsck.ok()) << fsck.status().ToString();
  EXPECT_TRUE(fsck->ok());
  EXPECT_TRUE(fsck->missing.empty());
  EXPECT_EQ(fsck->unreachable, 0u);

  // Again with the same policy: what was forgotten is no longer a candidate.
  auto again = PlanForget(*store_, {"main"}, policy, protect);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->branches[0].already_forgotten, 4u);
  EXPECT_EQ(again->branches[0].line.size(), 6u);
  EXPECT_TRUE(again->forget.empty());
}

TEST_F(ForgetTest, ACommitKeptByAnyEvaluatedBranchStays) {
  std::vector<Hash> day;
  for (int i = 0; i < 4; i++) day.push_back(CommitDay("main", i));
  ASSERT_TRUE(store_->CompareAndSwapRef("side", std::nullopt, day[1]).ok());
  Hash side_tip = CommitDay("side", 20);  // side: day 20 -> day 1 -> day 0
  RetentionPolicy policy;
  policy.last = 2;
  auto plan = PlanForget(*store_, {}, policy, {});  // every branch
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->branches.size(), 2u);
  // main keeps days 3 and 2; side keeps day 20 and day 1, so day 1 stays on
  // main's line too; day 0 is forgotten by both.
  EXPECT_EQ(Forgotten(*plan), (std::set<Hash>{day[0]}));
  const ForgetBranchPlan& main = plan->branches[0];
  EXPECT_EQ(main.line[2].id, day[1]);
  EXPECT_EQ(main.line[2].reasons, (std::vector<std::string>{"kept for branch side"}));
  EXPECT_EQ(plan->branches[1].line[0].id, side_tip);
}

TEST_F(ForgetTest, RecordLeavesOutWhatBecameAHeadOrABaseSinceThePlan) {
  std::vector<Hash> day;
  for (int i = 0; i < 5; i++) day.push_back(CommitDay("main", i));
  RetentionPolicy policy;
  policy.last = 1;
  auto plan = PlanForget(*store_, {"main"}, policy, {});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->forget.size(), 4u);
  // Meanwhile: a branch made at day 2, a workspace on day 1.
  ASSERT_TRUE(store_->CompareAndSwapRef("fix", std::nullopt, day[2]).ok());
  auto recorded = RecordForget(*store_, *plan, [&]() -> Result<ProtectedCommits> {
    return ProtectedCommits{{day[1], "base of workspace late"}};
  });
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(*recorded, 2u);
  EXPECT_EQ(Forgotten(*plan), (std::set<Hash>{day[0], day[3]}));
  EXPECT_EQ(plan->branches[0].line[2].reasons, (std::vector<std::string>{"head of branch fix"}));
  EXPECT_EQ(plan->branches[0].line[3].reasons, (std::vector<std::string>{"base of workspace late"}));
  EXPECT_FALSE(*store_->index()->IsForgotten(day[2]));
  EXPECT_TRUE(*store_->index()->IsForgotten(day[3]));
}

TEST_F(ForgetTest, AForgottenCommitThatIsARootKeepsItsTree) {
  std::vector<Hash> day;
  for (int i = 0; i < 3; i++) day.push_back(CommitDay("main", i));
  ASSERT_TRUE(store_->index()->AddForgotten({day[1]}, 0).ok());
  // Reached first through main's parent link, then as a workspace's base.
  GcOptions options = WithWorkspaceOn(day[1]);
  auto gc = CollectGarbage(*store_, options);
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  EXPECT_EQ(gc->objects_deleted, 0u);
  auto bytes = ReadDayFile(day[1]);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, DayBytes(1));
  // Without that root its own chunk and tree go.
  options.extra_roots = nullptr;
  gc = CollectGarbage(*store_, options);
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->objects_deleted, 2u);
  EXPECT_FALSE(*store_->Contains(ChunkOf(DayBytes(1))));
}

TEST_F(ForgetTest, AStoreMadeBeforeTheForgottenTableWorksAndGainsIt) {
  std::vector<Hash> day;
  for (int i = 0; i < 3; i++) day.push_back(CommitDay("main", i));
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((path_ + "/index.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE IF EXISTS forgotten", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  store_ = std::move(s).value();

  EXPECT_TRUE(CheckNotForgotten(*store_, day[0]).ok());
  auto listed = ForgottenCommits(*store_);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_TRUE(listed->empty());
  auto gc = CollectGarbage(*store_, GcOptions());
  ASSERT_TRUE(gc.ok()) << gc.status().ToString();
  RetentionPolicy policy;
  policy.last = 1;
  auto plan = PlanForget(*store_, {"main"}, policy, {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto recorded = RecordForget(*store_, *plan, nullptr);
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(*recorded, 2u);
  EXPECT_FALSE(CheckNotForgotten(*store_, day[0]).ok());
}

TEST_F(ForgetTest, BadRequestsChangeNothing) {
  CommitDay("main", 0);
  RetentionPolicy policy;
  EXPECT_FALSE(PlanForget(*store_, {"main"}, policy, {}).ok());  // empty policy
  policy.daily = 1;
  auto unknown = PlanForget(*store_, {"nope"}, policy, {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(unknown.status().IsNotFound());
  auto listed = ForgottenCommits(*store_);
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

}  // namespace
}  // namespace strata
