#include "util/sqlite_statement.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace strata {
namespace {

class SqliteStatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db_, "CREATE TABLE t(k INTEGER, v BLOB, s TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  void TearDown() override { sqlite3_close(db_); }
  sqlite3* db_ = nullptr;
};

TEST_F(SqliteStatementTest, BindsStepsAndReadsColumns) {
  const Hash h = Sha256::Of("x", 1);
  {
    SqliteStatement ins(db_, "INSERT INTO t VALUES(?, ?, ?)");
    ASSERT_TRUE(ins.prepared());
    EXPECT_EQ(ins.BindInt(1, -7).BindBlob(2, h).BindText(3, "name").Step(), SQLITE_DONE);
    ins.Reset();
    EXPECT_EQ(ins.BindInt(1, 8).BindBlob(2, std::string_view()).BindNull(3).Step(), SQLITE_DONE);
  }
  SqliteStatement sel(db_, "SELECT k, v, s, typeof(v) FROM t ORDER BY k");
  ASSERT_EQ(sel.Step(), SQLITE_ROW);
  EXPECT_EQ(sel.ColInt(0), -7);
  EXPECT_EQ(sel.ColHash(1), h);
  EXPECT_EQ(sel.ColText(2), "name");
  EXPECT_FALSE(sel.ColNull(2));
  ASSERT_EQ(sel.Step(), SQLITE_ROW);
  EXPECT_EQ(sel.ColText(3), "blob") << "an empty blob is bound as a blob, not NULL";
  EXPECT_EQ(sel.ColBlob(1), "");
  EXPECT_FALSE(sel.ColHash(1).has_value());
  EXPECT_TRUE(sel.ColNull(2));
  EXPECT_EQ(sel.Step(), SQLITE_DONE);
}

TEST_F(SqliteStatementTest, AStatementThatDoesNotPrepareFailsEveryStep) {
  SqliteStatement bad(db_, "SELECT x FROM nowhere");
  EXPECT_FALSE(bad.prepared());
  EXPECT_EQ(bad.BindInt(1, 1).Step(), SQLITE_ERROR);
  EXPECT_NE(bad.ErrorMessage().find("nowhere"), std::string::npos) << bad.ErrorMessage();
}

TEST_F(SqliteStatementTest, ABorrowedStatementIsResetNotFinalized) {
  sqlite3_stmt* cached = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db_, "SELECT ?", -1, &cached, nullptr), SQLITE_OK);
  {
    SqliteStatement use = SqliteStatement::Borrow(db_, cached);
    ASSERT_EQ(use.BindInt(1, 42).Step(), SQLITE_ROW);
    EXPECT_EQ(use.ColInt(0), 42);
  }
  // Still usable, and its parameter was cleared (NULL).
  ASSERT_EQ(sqlite3_step(cached), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_type(cached, 0), SQLITE_NULL);
  sqlite3_finalize(cached);
}

}  // namespace
}  // namespace strata
