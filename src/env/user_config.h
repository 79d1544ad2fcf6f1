// Where strata keeps the per-user files it reads (the trusted stores, the
// author identity): $XDG_CONFIG_HOME/strata when XDG_CONFIG_HOME is an
// absolute path, else ~/.config/strata of the user strata runs as.
#pragma once

#include <string>
#include <string_view>

namespace strata {

// The path of file `name` in that directory; "" when there is no home to
// find it in.
std::string UserConfigFile(std::string_view name);

}  // namespace strata
