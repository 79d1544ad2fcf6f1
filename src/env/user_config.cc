#include "env/user_config.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace strata {

std::string UserConfigFile(std::string_view name) {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && xdg[0] == '/')
    return std::string(xdg) + "/strata/" + std::string(name);
  // The passwd entry first: a daemon started by root keeps a caller's HOME.
  std::string home;
  if (struct passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr) home = pw->pw_dir;
  if (home.empty()) {
    const char* env_home = std::getenv("HOME");
    if (env_home == nullptr) return "";
    home = env_home;
  }
  return home + "/.config/strata/" + std::string(name);
}

}  // namespace strata
