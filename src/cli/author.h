// Who a new commit says made it (commit, import, exec --commit).
//
// Each of the name and the email is taken from the first of:
//   1. STRATA_AUTHOR_NAME / STRATA_AUTHOR_EMAIL (an empty variable counts as unset);
//   2. the user's config file, UserConfigFile("config") (env/user_config.h),
//      lines of `name = ...` and `email = ...`, '#' comments and blank lines;
//   3. the login name and login@host.
// The author is then "Name <email>", as git writes it. When neither was given
// by 1 or 2 it stays "login@host", what strata recorded before it had names.
// README.md ("Who made a commit") is the user's documentation of this.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace strata::cli {

struct AuthorConfig {
  std::string name, email;  // "" when the file does not set it
};

// Parses the text of a config file; `shown` names it in errors, which say
// the line: an unknown key, a key given twice, a line without '=', an empty
// value, or a value with '<', '>' or a control character.
Result<AuthorConfig> ParseAuthorConfig(std::string_view text, const std::string& shown);

// The author for a commit made now, from the environment, the config file
// (absent is fine; unreadable or malformed is an error) and the fallback.
Result<std::string> CommitAuthor();

}  // namespace strata::cli
