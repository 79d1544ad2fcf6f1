// `strata stats MOUNTPOINT --watch`: the counters of a mount's daemon again
// and again, with what moved per second since the last look.
//
// On a terminal the view is redrawn in place (as top does) until Ctrl-C;
// anywhere else (a pipe, a file, a log) each look is printed as a block of its
// own, headed by the time, so that the output reads as a log and nothing in
// it is a terminal control sequence. --count N stops after N looks.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <thread>

#include "cli/cli.h"
#include "control/socket.h"
#include "daemon/mount_record.h"
#include "util/progress.h"

namespace strata::cli {

namespace {

std::atomic<bool> interrupted{false};
void OnInterrupt(int) { interrupted = true; }

std::string LocalTime() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// What moved per second between the look before (none on the first: "-")
// and this one, of the counter `field` picks from a reply.
class Rates {
 public:
  Rates(const control::StatsReply& now, const control::StatsReply* before, double seconds)
      : now_(now), before_(before), seconds_(seconds) {}

  template <typename Field>
  std::string PerSecond(Field field) const {
    const double r = Rate(field(now_), before_ ? field(*before_) : 0);
    return r < 0 ? "-" : fmt::format("{:.1f}", r);
  }
  template <typename Field>
  std::string BytesPerSecond(Field field) const {
    const double r = Rate(field(now_), before_ ? field(*before_) : 0);
    return r < 0 ? "-" : HumanBytes(static_cast<uint64_t>(r)) + "/s";
  }
  // An operation's; one the look before had not seen yet had a count of 0.
  std::string OperationPerSecond(const control::OperationCounters& op) const {
    uint64_t was = 0;
    if (before_)
      for (const auto& b : before_->operations)
        if (b.name == op.name) was = b.count;
    const double r = Rate(op.count, was);
    return r < 0 ? "-" : fmt::format("{:.1f}", r);
  }

 private:
  // -1 when there is no rate: no look before, or a counter that went back.
  double Rate(uint64_t now, uint64_t before) const {
    if (before_ == nullptr || seconds_ <= 0 || now < before) return -1;
    return static_cast<double>(now - before) / seconds_;
  }
  const control::StatsReply& now_;
  const control::StatsReply* before_;
  double seconds_;
};

// One look: the counters, and rates against the look before (if any).
std::string Render(const std::string& name, const std::string& mountpoint, const control::StatsReply& now,
                   const control::StatsReply* before, double seconds) {
  const Rates rates(now, before, seconds);
  std::string out = fmt::format("{}  workspace {} at {}, {} changed inodes\n", LocalTime(), name, mountpoint,
                                now.workspace.changed_paths);
  out += fmt::format("{:<16} {:>12} {:>10} {:>8}\n", "OPERATION", "COUNT", "PER SEC", "ERRORS");
  for (const auto& op : now.operations)
    out += fmt::format("{:<16} {:>12} {:>10} {:>8}\n", op.name, op.count, rates.OperationPerSecond(op), op.errors);
  const WorkspaceCounters& w = now.workspace;
  using Reply = control::StatsReply;
  out += fmt::format("written  {:>12} {:>14}   read     {:>12} {:>14}\n", HumanBytes(w.bytes_written),
                     rates.BytesPerSecond([](const Reply& r) { return r.workspace.bytes_written; }),
                     HumanBytes(w.bytes_read),
                     rates.BytesPerSecond([](const Reply& r) { return r.workspace.bytes_read; }));
  out +=
      fmt::format("cache    {} hits ({}/s), {} misses ({}/s); {} fetches ({}/s)\n", w.chunk_cache_hits,
                  rates.PerSecond([](const Reply& r) { return r.workspace.chunk_cache_hits; }), w.chunk_cache_misses,
                  rates.PerSecond([](const Reply& r) { return r.workspace.chunk_cache_misses; }), w.read_path.fetches,
                  rates.PerSecond([](const Reply& r) { return r.workspace.read_path.fetches; }));
  const StoreReadCounters& s = w.read_path.store;
  out += fmt::format("store    {} objects read ({}/s), {} ({})\n", s.objects,
                     rates.PerSecond([](const Reply& r) { return r.workspace.read_path.store.objects; }),
                     HumanBytes(s.bytes_stored),
                     rates.BytesPerSecond([](const Reply& r) { return r.workspace.read_path.store.bytes_stored; }));
  return out;
}

}  // namespace

int WatchMountStats(Globals& g, const std::string& mp_arg, double interval_s, uint64_t count) {
  std::error_code ec;
  std::string mountpoint = std::filesystem::canonical(mp_arg, ec).string();
  if (ec) return Fail(Status::NotFound(mp_arg + " does not exist"));
  std::string name, socket_path;
  {
    auto store = OpenStoreFor(g, mountpoint);
    if (!store.ok()) return Fail(store.status());
    auto found = daemon::FindMountAt(**store, mountpoint);
    if (!found) return Fail(Status::NotFound("no strata workspace is mounted at " + mountpoint));
    name = found->first;
    socket_path = Workspace::StateDir(**store, name) + "/control.sock";
  }
  // Ctrl-C ends the watch between two looks, with the terminal left tidy.
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  const auto interval = std::chrono::duration<double>(interval_s);
  std::optional<control::StatsReply> before;
  auto before_at = std::chrono::steady_clock::now();
  for (uint64_t looks = 0; !interrupted && (count == 0 || looks < count); looks++) {
    if (looks > 0) {
      const auto wake = before_at + std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
      while (!interrupted && std::chrono::steady_clock::now() < wake)
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
            wake - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
      if (interrupted) break;
    }
    auto now = control::Ask(socket_path, control::StatsRequest{});
    if (!now.ok()) return Fail(now.status().WithContext("the mount at " + mountpoint + " stopped answering"));
    const auto at = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(at - before_at).count();
    const std::string view = Render(name, mountpoint, *now, before ? &*before : nullptr, seconds);
    if (terminal)
      fmt::print("\033[H\033[2J{}(every {}s; Ctrl-C ends)\n", view, interval_s);  // home, clear, redraw
    else
      fmt::print("{}{}", looks > 0 ? "\n" : "", view);
    std::fflush(stdout);
    before = std::move(*now);
    before_at = at;
  }
  return kExitOk;
}

}  // namespace strata::cli
