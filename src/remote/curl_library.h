// libcurl, loaded when a remote store is first used rather than when strata
// starts; internal to src/remote.
//
// Why: linking libcurl made the dynamic loader map and relocate its ~30
// shared libraries (TLS, Kerberos, LDAP, IDN, ...) in every strata process,
// about half the start-up of a command that never touches the network
// (`strata exec`, mount daemons, local commands). Only the S3 code needs it,
// so it dlopen()s libcurl.so.4 on first use and calls it through a table.
// The headers are still used for curl's types and constants; the package
// lists libcurl4 as a dependency by hand, since no linked library names it.
//
// Thread-safety: LoadCurl() may be called from any thread; the first call
// loads the library and runs curl_global_init, once per process (later calls
// wait for it and return the same answer). The library is never unloaded, so
// the table stays valid for the life of the process.
#pragma once

#include <curl/curl.h>

#include "util/status.h"

namespace strata::s3 {

// The curl functions the S3 code calls, resolved from the loaded library.
// Types come from curl's own declarations, so a call through the table is
// checked like a direct call.
struct CurlApi {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_reset) easy_reset;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_version_info) version_info;
};

// The oldest libcurl that signs requests itself (CURLOPT_AWS_SIGV4).
constexpr unsigned kMinCurlVersion = CURL_VERSION_BITS(7, 75, 0);

// The loaded, initialised libcurl; Unsupported, saying to install libcurl4,
// when libcurl.so.4 cannot be loaded, lacks a function, is older than
// kMinCurlVersion, or fails to initialise.
Result<const CurlApi*> LoadCurl();

}  // namespace strata::s3
