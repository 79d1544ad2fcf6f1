#include <fmt/format.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <filesystem>

#include "cli/cli.h"
#include "remote/remote.h"
#include "util/time_ns.h"

namespace strata::cli {

CLI::Validator FiniteRange(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !(v >= lo && v <= hi))
          return fmt::format("Value {} not in range {} to {}", text, lo, hi);
        return "";
      },
      fmt::format("FLOAT in [{} - {}]", lo, hi));
}

std::string StorePath(const Globals& g) {
  if (!g.store.empty()) return g.store;
  if (const char* env = std::getenv("STRATA_STORE"); env && *env) return env;
  // Inside a mount, its store, as git finds the repository of the directory
  // it runs in.
  if (auto enclosing = daemon::EnclosingStrataMount("."); enclosing && !enclosing->source.store.empty())
    return enclosing->source.store;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return std::string(xdg) + "/strata";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/strata";
}

PassphraseSource StorePassphrase(const Globals& g, const std::string& path) {
  PassphraseSource source;
  source.file = g.password_file;
  source.option = "--password-file";
  source.env_var = "STRATA_PASSWORD";
  source.prompt = "passphrase for the store at " + path + ": ";
  return source;
}

std::string StoreKeyFile(const Globals& g) {
  if (!g.key_file.empty()) return g.key_file;
  // An explicit --password-file is what the caller chose for this command.
  if (!g.password_file.empty()) return "";
  const char* env = std::getenv("STRATA_KEY_FILE");
  return env != nullptr ? env : "";
}

Result<std::optional<crypto::Key256>> LocalStoreKey(const Globals& g) {
  const std::string path = StorePath(g);
  STRATA_ASSIGN_OR_RETURN(StoreConfig config, Store::ReadConfig(path));
  if (!config.encrypted()) return std::optional<crypto::Key256>();
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 master, UnlockStoreKey(path, StorePassphrase(g, path), StoreKeyFile(g)));
  return std::optional<crypto::Key256>(master);
}

Result<std::unique_ptr<Store>> OpenLocalStore(const Globals& g) {
  STRATA_ASSIGN_OR_RETURN(std::optional<crypto::Key256> master, LocalStoreKey(g));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          Store::Open(StorePath(g), Env::Default(), master ? &*master : nullptr));
  ClaimSealGenerationsFromRemotes(*store, master ? &*master : nullptr);
  return store;
}

Result<std::unique_ptr<Store>> OpenStore(const Globals& g) {
  if (g.remote.empty()) return OpenLocalStore(g);
  // A remote of an encrypted store is encrypted under the same key.
  STRATA_ASSIGN_OR_RETURN(std::optional<crypto::Key256> master, LocalStoreKey(g));
  return OpenRemoteStore(StorePath(g), g.remote, master ? &*master : nullptr);
}

Result<std::unique_ptr<Store>> OpenStoreFor(const Globals& g, const std::string& mountpoint_or_name) {
  std::optional<MountSource> source = MountSourceOf(mountpoint_or_name);
  if (!source) return OpenStore(g);
  // A mountpoint names its workspace, and its mount's source says where that
  // lives; --store, STRATA_STORE and --remote only matter for a mount made
  // before the store was recorded there.
  Globals mounted = g;
  mounted.remote = source->remote;
  if (!source->store.empty()) mounted.store = source->store;
  return OpenStore(mounted);
}

int Fail(const Status& s) {
  std::fprintf(stderr, "strata: %s\n", s.message().c_str());
  switch (s.code()) {
    case Status::Code::kOk: return kExitOk;
    case Status::Code::kCorruption: return kExitDamaged;
    case Status::Code::kConflict: return kExitConflict;
    default: return kExitError;
  }
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "strata: %s\n", message.c_str());
  return kExitUsage;
}

void PrintJson(const nlohmann::ordered_json& j) {
  // Replace invalid UTF-8 (names are bytes) rather than throwing.
  std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

std::string ShortId(const Hash& h) { return h.ToHex().substr(0, 12); }

std::string FormatCommitTime(int64_t time_ns) {
  const SplitTime when = SplitNs(time_ns);
  time_t t = static_cast<time_t>(when.sec);
  struct tm tm;
  localtime_r(&t, &tm);
  // strftime's %e pads the day with a space; git prints it bare.
  char weekday_month[16], clock[16], zone[16];
  std::strftime(weekday_month, sizeof(weekday_month), "%a %b", &tm);
  std::strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
  std::strftime(zone, sizeof(zone), "%z", &tm);
  return fmt::format("{} {} {} {} {}", weekday_month, tm.tm_mday, clock, tm.tm_year + 1900, zone);
}

std::string FormatTime(int64_t sec, uint32_t nsec) {
  time_t t = static_cast<time_t>(sec);
  struct tm tm;
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  char zone[16];
  std::strftime(zone, sizeof(zone), "%z", &tm);
  return fmt::format("{}.{:09d} {}", buf, nsec, zone);
}

bool WaitForProcessExit(int pid, int timeout_ms) {
  if (pid <= 0) return true;
  // A pid file descriptor turns readable when the process has exited, which
  // is after it closed its files (and so released its locks).
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return errno == ESRCH;
  pollfd p{pidfd, POLLIN, 0};
  int rc;
  while ((rc = ::poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
  }
  ::close(pidfd);
  return rc > 0;
}

}  // namespace strata::cli
