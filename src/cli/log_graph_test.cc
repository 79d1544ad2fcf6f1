#include <gtest/gtest.h>

#include "cli/history.h"

namespace strata::cli {
namespace {

Hash Id(char c) { return Sha256::Of(&c, 1); }

// Draws commits (name, parent names), in the order given, as `log --graph`
// would: the prefix of each commit line followed by its name, then the rows
// after it.
std::vector<std::string> Draw(const std::vector<std::pair<char, std::string>>& commits) {
  LogGraph graph;
  std::vector<std::string> out;
  for (const auto& [name, parents] : commits) {
    std::vector<Hash> ids;
    for (char p : parents) ids.push_back(Id(p));
    LogGraph::Row row = graph.Add(Id(name), ids);
    for (const std::string& line : row.before) out.push_back(line);
    out.push_back(row.prefix + name);
    for (const std::string& line : row.after) out.push_back(line);
  }
  return out;
}

using Lines = std::vector<std::string>;

TEST(LogGraphTest, AChainIsOneColumn) {
  EXPECT_EQ(Draw({{'c', "b"}, {'b', "a"}, {'a', ""}}), (Lines{"* c", "* b", "* a"}));
}

TEST(LogGraphTest, TwoBranchesJoinAtTheirBase) {
  EXPECT_EQ(Draw({{'f', "b"}, {'m', "b"}, {'b', ""}}), (Lines{"* f", "| * m", "|/", "* b"}));
}

TEST(LogGraphTest, AMergeOpensAColumnAndClosesIt) {
  // m merges y (first parent, the main line) and x2.
  EXPECT_EQ(Draw({{'m', "yx"}, {'x', "w"}, {'w', "b"}, {'y', "b"}, {'b', ""}}),
            (Lines{"* m", "|\\", "| * x", "| * w", "* | y", "|/", "* b"}));
}

TEST(LogGraphTest, AMergeBesideAnotherLine) {
  // t is a tip on its own line to the right when m (a merge) is drawn.
  // m's first parent joins the column already waiting for a at once.
  EXPECT_EQ(Draw({{'t', "a"}, {'m', "ab"}, {'b', "a"}, {'a', ""}}),
            (Lines{"* t", "| * m", "|/|", "| * b", "|/", "* a"}));
}

TEST(LogGraphTest, ARootEndsItsLineAndAnUnrelatedHistoryStartsANewOne) {
  // Two roots one after the other: a blank row between them.
  EXPECT_EQ(Draw({{'x', ""}, {'y', ""}}), (Lines{"* x", "", "* y"}));
  // Two chains: c-b-a, then z-y: the second does not continue the first.
  EXPECT_EQ(Draw({{'c', "b"}, {'b', "a"}, {'a', ""}, {'z', "y"}, {'y', ""}}),
            (Lines{"* c", "* b", "* a", "", "* z", "* y"}));
  // A root beside a line that goes on: the other column keeps its '|'.
  EXPECT_EQ(Draw({{'t', "a"}, {'r', ""}, {'s', ""}, {'a', ""}}),
            (Lines{"* t", "| * r", "|", "| * s", "* a"}));
  // A new history that lands where nothing was drawn needs no gap.
  EXPECT_EQ(Draw({{'t', "a"}, {'r', ""}, {'a', ""}}), (Lines{"* t", "| * r", "* a"}));
}

TEST(LogGraphTest, OctopusMerges) {
  EXPECT_EQ(Draw({{'o', "abc"}, {'a', ""}, {'b', ""}, {'c', ""}}),
            (Lines{"* o", "|\\", "| |\\", "* | | a", " / /", "* | b", " /", "* c"}));
}

}  // namespace
}  // namespace strata::cli
