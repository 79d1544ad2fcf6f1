#include "remote/curl_library.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace strata::s3 {
namespace {

constexpr const char* kSoname = "libcurl.so.4";
constexpr const char* kInstall = "install libcurl4 (remote stores need it)";

// Resolves `name` into *slot; false when the library lacks it.
template <typename Fn>
bool Resolve(void* library, const char* name, Fn* slot) {
  void* symbol = ::dlsym(library, name);
  if (symbol == nullptr) return false;
  *slot = reinterpret_cast<Fn>(symbol);
  return true;
}

Result<const CurlApi*> Load() {
  // RTLD_LOCAL: curl's symbols serve only this table, never a later lookup
  // by name elsewhere in the process.
  void* library = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    return Status::Unsupported(std::string("cannot load ") + kSoname + ": " + kInstall +
                               (why != nullptr ? std::string(" [") + why + "]" : std::string()));
  }
  static CurlApi api;
  const char* missing = nullptr;
  auto resolve = [&](const char* name, auto* slot) {
    if (missing == nullptr && !Resolve(library, name, slot)) missing = name;
  };
  resolve("curl_global_init", &api.global_init);
  resolve("curl_easy_init", &api.easy_init);
  resolve("curl_easy_cleanup", &api.easy_cleanup);
  resolve("curl_easy_reset", &api.easy_reset);
  resolve("curl_easy_setopt", &api.easy_setopt);
  resolve("curl_easy_perform", &api.easy_perform);
  resolve("curl_easy_getinfo", &api.easy_getinfo);
  resolve("curl_easy_strerror", &api.easy_strerror);
  resolve("curl_slist_append", &api.slist_append);
  resolve("curl_slist_free_all", &api.slist_free_all);
  resolve("curl_version_info", &api.version_info);
  if (missing != nullptr) {
    return Status::Unsupported(std::string(kSoname) + " has no " + missing + ": " + kInstall);
  }
  const curl_version_info_data* version = api.version_info(CURLVERSION_NOW);
  if (version == nullptr || version->version_num < kMinCurlVersion) {
    return Status::Unsupported(std::string(kSoname) + " is version " +
                               (version != nullptr ? version->version : "unknown") +
                               ", older than 7.75.0 (which signs S3 requests): " + kInstall);
  }
  if (CURLcode code = api.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return Status::Unsupported(std::string("curl_global_init failed: ") + api.easy_strerror(code));
  }
  return &api;
}

}  // namespace

Result<const CurlApi*> LoadCurl() {
  static std::once_flag once;
  static Result<const CurlApi*> loaded = Status::Unsupported("libcurl not loaded");
  std::call_once(once, [] { loaded = Load(); });
  return loaded;
}

}  // namespace strata::s3
