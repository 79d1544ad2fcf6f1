#include "cli/author.h"

#include <gtest/gtest.h>

namespace strata::cli {
namespace {

TEST(AuthorConfigTest, ReadsNameAndEmailWithCommentsAndSpaces) {
  auto c = ParseAuthorConfig("# who I am\n\n  name =  Ada Lovelace \nemail=ada@example.org\n", "cfg");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name, "Ada Lovelace");
  EXPECT_EQ(c->email, "ada@example.org");
}

TEST(AuthorConfigTest, EitherKeyMayBeMissing) {
  auto c = ParseAuthorConfig("email = a@b\n", "cfg");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->name, "");
  EXPECT_EQ(c->email, "a@b");
  EXPECT_TRUE(ParseAuthorConfig("", "cfg").ok());
}

// Each error names the file and the line.
void ExpectError(const char* text, const std::string& says) {
  auto c = ParseAuthorConfig(text, "cfg");
  ASSERT_FALSE(c.ok()) << text;
  EXPECT_NE(c.status().message().find(says), std::string::npos) << c.status().message();
}

TEST(AuthorConfigTest, RefusesWhatItDoesNotUnderstand) {
  ExpectError("name = A\nuser = b\n", "cfg:2: unknown key 'user'");
  ExpectError("name A\n", "cfg:1: expected 'name = ...'");
  ExpectError("name = A\nname = B\n", "cfg:2: 'name' is given a second time");
  ExpectError("\n\nemail =\n", "cfg:3: 'email' has an empty value");
  ExpectError("name = A <a@b>\n", "cfg:1: 'name' has '<' or '>'");
  ExpectError("name = A\x01\n", "control character");
  ExpectError("[user]\n", "cfg:1: expected");
}

}  // namespace
}  // namespace strata::cli
