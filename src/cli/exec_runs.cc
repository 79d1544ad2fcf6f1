#include "cli/exec_runs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "util/small_file.h"

namespace strata::cli {
namespace {

std::string RunsDir(const Globals& g) { return StorePath(g) + "/exec-runs"; }

bool IsValidRunId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  return true;
}

// Written whole or not at all: a reader never sees half a result.
void WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (ok) ::rename(tmp.c_str(), path.c_str());
}

struct RunState {
  std::string dir;
  int pid = 0;
  bool running = false;
  std::optional<int> exit_status;  // set once finished
};

Result<RunState> ReadRun(const Globals& g, const std::string& id) {
  if (!IsValidRunId(id)) return Status::InvalidArgument("'" + id + "' is not a run id");
  RunState r;
  r.dir = RunsDir(g) + "/" + id;
  struct stat st;
  if (::lstat(r.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return Status::NotFound("no exec run '" + id + "'");
  r.pid = std::atoi(ReadSmallFile(r.dir + "/pid").c_str());
  std::string result = ReadSmallFile(r.dir + "/result");
  if (!result.empty()) {
    auto j = nlohmann::json::parse(result, nullptr, false);
    if (!j.is_discarded() && j.contains("exit_status")) r.exit_status = j["exit_status"].get<int>();
  }
  r.running = !r.exit_status && r.pid > 0 && !WaitForProcessExit(r.pid, 0);
  return r;
}

std::string StateName(const RunState& r) { return r.exit_status ? "exited" : r.running ? "running" : "killed"; }

int RunStatus(Globals& g, const std::string& id) {
  auto r = ReadRun(g, id);
  if (!r.ok()) return Fail(r.status());
  nlohmann::ordered_json j = {{"id", id}, {"state", StateName(*r)}, {"pid", r->pid}};
  j["exit_status"] = r->exit_status ? nlohmann::ordered_json(*r->exit_status) : nlohmann::ordered_json();
  if (g.json) {
    PrintJson(j);
  } else {
    std::printf("%s %s%s\n", id.c_str(), StateName(*r).c_str(),
                r->exit_status ? (" " + std::to_string(*r->exit_status)).c_str() : "");
  }
  return kExitOk;
}

int RunOutput(Globals& g, const std::string& id, bool follow) {
  auto r = ReadRun(g, id);
  if (!r.ok()) return Fail(r.status());
  int fd = ::open((r->dir + "/output").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Fail(Status::IOError("the output of run " + id, errno));
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      std::fwrite(buf, 1, static_cast<size_t>(n), stdout);
      continue;
    }
    if (!follow) break;
    std::fflush(stdout);
    auto now = ReadRun(g, id);
    // Finished (or killed): read what it wrote last, then stop.
    if (!now.ok() || !now->running) {
      while ((n = ::read(fd, buf, sizeof(buf))) > 0) std::fwrite(buf, 1, static_cast<size_t>(n), stdout);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::close(fd);
  return kExitOk;
}

int RunStop(Globals& g, const std::string& id) {
  auto r = ReadRun(g, id);
  if (!r.ok()) return Fail(r.status());
  if (!r->running) return Fail(Status::InvalidArgument("run " + id + " is not running (" + StateName(*r) + ")"));
  // The run passes SIGTERM on to its sandbox and then cleans up as usual.
  ::kill(r->pid, SIGTERM);
  if (!WaitForProcessExit(r->pid, 30'000))
    return Fail(Status::IOErrorWithMessage("run " + id + " did not end within 30 s", EBUSY));
  auto after = ReadRun(g, id);
  std::printf("stopped %s%s\n", id.c_str(),
              after.ok() && after->exit_status ? (" (exit " + std::to_string(*after->exit_status) + ")").c_str() : "");
  return kExitOk;
}

}  // namespace

int StartDetachedRun(Globals& g, const std::function<int()>& run) {
  const std::string runs = RunsDir(g);
  if (::mkdir(runs.c_str(), 0700) != 0 && errno != EEXIST) return Fail(Status::IOError("cannot create " + runs, errno));
  // Not through a link planted in the store, nor into someone else's directory.
  struct stat st;
  if (::lstat(runs.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return Fail(Status::InvalidArgument(runs + " is not a directory of this user's (a link?): refusing to use it"));
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string id = std::to_string(ns / 1'000'000) + "-" + std::to_string(::getpid());
  const std::string dir = runs + "/" + id;
  if (::mkdir(dir.c_str(), 0700) != 0) return Fail(Status::IOError("cannot create " + dir, errno));
  int out = ::open((dir + "/output").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (out < 0) return Fail(Status::IOError("cannot create the output of run " + id, errno));
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return Fail(Status::IOError("pipe", errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return Fail(Status::IOError("fork", errno));
  if (pid == 0) {
    ::close(ready[0]);
    ::setsid();
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    WriteFileAtomically(dir + "/pid", std::to_string(::getpid()) + "\n");
    ::close(ready[1]);  // the record exists: the command may print the id
    int rc = run();
    std::fflush(nullptr);
    WriteFileAtomically(dir + "/result", nlohmann::json({{"exit_status", rc}}).dump() + "\n");
    ::_exit(rc);
  }
  ::close(out);
  ::close(ready[1]);
  char c;
  while (::read(ready[0], &c, 1) < 0 && errno == EINTR) {
  }
  ::close(ready[0]);
  std::printf("%s\n", id.c_str());
  return kExitOk;
}

void RegisterExecRunCommands(CLI::App& app, Globals& g, int* exit_code) {
  static std::string id;
  static bool follow = false;
  auto* status = app.add_subcommand("exec-status", "the state of a detached exec run: running, exited N, or killed");
  status->add_option("ID", id, "the id exec --detach printed")->required();
  status->add_flag("--json", g.json, "machine-readable output");
  status->callback([&g, exit_code] { *exit_code = RunStatus(g, id); });
  auto* output = app.add_subcommand("output", "what a detached exec run wrote (stdout and stderr)");
  output->add_option("ID", id, "the id exec --detach printed")->required();
  output->add_flag("--follow", follow, "keep printing until the run ends");
  output->callback([&g, exit_code] { *exit_code = RunOutput(g, id, follow); });
  auto* stop = app.add_subcommand("stop", "stop a detached exec run (SIGTERM to its sandbox); it cleans up as usual");
  stop->add_option("ID", id, "the id exec --detach printed")->required();
  stop->callback([&g, exit_code] { *exit_code = RunStop(g, id); });
}

}  // namespace strata::cli
