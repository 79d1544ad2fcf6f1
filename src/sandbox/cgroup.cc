#include "sandbox/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "util/small_file.h"

namespace strata::sandbox {
namespace {

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";
constexpr const char* kGroupPrefix = "exec-";

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }
bool IsV2(const std::string& root) { return Exists(root + "/cgroup.controllers"); }

Status WriteFile(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + path, errno);
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) return Status::IOError("cannot write '" + text + "' to " + path, err);
  return Status::Ok();
}

// The value of `key` in a flat keyed file ("oom_kill 3\n..."); 0 when absent.
uint64_t KeyedValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

// The names of a space-separated list ("cpuset cpu io memory"): whole words,
// so that "cpuset" does not pass for "cpu".
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

std::vector<pid_t> Procs(const std::string& procs_file) {
  std::vector<pid_t> pids;
  std::istringstream in(ReadSmallFile(procs_file));
  pid_t p;
  // Only real pids: kill(0) or kill(-1) would reach far beyond the group.
  while (in >> p)
    if (p > 0) pids.push_back(p);
  return pids;
}

void KillIn(const std::string& procs_file) {
  for (int round = 0; round < 100; round++) {
    std::vector<pid_t> pids = Procs(procs_file);
    if (pids.empty()) return;
    for (pid_t p : pids) ::kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// rmdir of a group whose last process may still be on its way out.
void RemoveGroup(const std::string& dir) {
  for (int i = 0; i < 200 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; i++) {
    KillIn(dir + "/cgroup.procs");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status MakeDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Status::IOError("cannot create cgroup " + dir, errno);
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Cgroup>> Cgroup::Create(const Limits& limits) { return CreateUnder(kCgroupRoot, limits); }

Result<std::unique_ptr<Cgroup>> Cgroup::CreateUnder(const std::string& root, const Limits& limits) {
  std::unique_ptr<Cgroup> cg(new Cgroup());
  cg->v2_ = IsV2(root);
  const std::string id = kGroupPrefix + std::to_string(::getpid());
  auto add_dir = [&](const std::string& parent) -> Result<std::string> {
    STRATA_RETURN_IF_ERROR(MakeDir(parent + "/strata"));
    std::string dir = parent + "/strata/" + id;
    STRATA_RETURN_IF_ERROR(MakeDir(dir));
    cg->dirs_.push_back(dir);
    cg->procs_files_.push_back(dir + "/cgroup.procs");
    return dir;
  };
  const uint64_t cpu_period_us = 100'000;
  const uint64_t cpu_quota_us = std::max<uint64_t>(1000, static_cast<uint64_t>(std::llround(limits.cpus * cpu_period_us)));
  if (cg->v2_) {
    std::string wanted;
    if (limits.memory_bytes) wanted += " +memory";
    if (limits.cpus > 0) wanted += " +cpu";
    if (limits.pids) wanted += " +pids";
    const std::vector<std::string> available = Words(ReadSmallFile(root + "/cgroup.controllers"));
    for (const char* c : {"memory", "cpu", "pids"})
      if (wanted.find(std::string("+") + c) != std::string::npos &&
          std::find(available.begin(), available.end(), c) == available.end())
        return Status::Unsupported(std::string("cgroup v2 offers no ") + c + " controller here");
    wanted.erase(0, 1);
    // Controllers reach a group only through its parents' subtree_control.
    STRATA_RETURN_IF_ERROR(WriteFile(root + "/cgroup.subtree_control", wanted));
    STRATA_RETURN_IF_ERROR(MakeDir(root + "/strata"));
    STRATA_RETURN_IF_ERROR(WriteFile(root + "/strata/cgroup.subtree_control", wanted));
    STRATA_ASSIGN_OR_RETURN(std::string dir, add_dir(root));
    if (limits.memory_bytes) {
      STRATA_RETURN_IF_ERROR(WriteFile(dir + "/memory.max", std::to_string(limits.memory_bytes)));
      // Swap would let the program run on past its limit, slowly.
      if (Exists(dir + "/memory.swap.max")) (void)WriteFile(dir + "/memory.swap.max", "0");
      cg->memory_dir_ = dir;
    }
    if (limits.cpus > 0)
      STRATA_RETURN_IF_ERROR(WriteFile(dir + "/cpu.max", std::to_string(cpu_quota_us) + " " + std::to_string(cpu_period_us)));
    if (limits.pids) STRATA_RETURN_IF_ERROR(WriteFile(dir + "/pids.max", std::to_string(limits.pids)));
    return cg;
  }
  auto controller = [&](const char* name) -> Result<std::string> {
    std::string parent = root + "/" + name;
    if (!Exists(parent + "/cgroup.procs"))
      return Status::Unsupported(std::string("no cgroup ") + name + " controller is mounted at " + parent);
    return add_dir(parent);
  };
  if (limits.memory_bytes) {
    STRATA_ASSIGN_OR_RETURN(std::string dir, controller("memory"));
    STRATA_RETURN_IF_ERROR(WriteFile(dir + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes)));
    if (Exists(dir + "/memory.memsw.limit_in_bytes"))
      (void)WriteFile(dir + "/memory.memsw.limit_in_bytes", std::to_string(limits.memory_bytes));
    (void)WriteFile(dir + "/memory.swappiness", "0");
    cg->memory_dir_ = dir;
  }
  if (limits.cpus > 0) {
    STRATA_ASSIGN_OR_RETURN(std::string dir, controller("cpu"));
    STRATA_RETURN_IF_ERROR(WriteFile(dir + "/cpu.cfs_period_us", std::to_string(cpu_period_us)));
    STRATA_RETURN_IF_ERROR(WriteFile(dir + "/cpu.cfs_quota_us", std::to_string(cpu_quota_us)));
  }
  if (limits.pids) {
    STRATA_ASSIGN_OR_RETURN(std::string dir, controller("pids"));
    STRATA_RETURN_IF_ERROR(WriteFile(dir + "/pids.max", std::to_string(limits.pids)));
  }
  return cg;
}

Cgroup::~Cgroup() {
  KillAll();
  for (const std::string& d : dirs_) RemoveGroup(d);
}

int Cgroup::AddSelf() const noexcept {
  for (const std::string& f : procs_files_) {
    int fd = ::open(f.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    // "0" names the writer itself.
    ssize_t n = ::write(fd, "0", 1);
    int err = errno;
    ::close(fd);
    if (n != 1) return err;
  }
  return 0;
}

bool Cgroup::MemoryLimitHit() const {
  if (memory_dir_.empty()) return false;
  const char* file = v2_ ? "/memory.events" : "/memory.oom_control";
  return KeyedValue(ReadSmallFile(memory_dir_ + file), "oom_kill") > 0;
}

void Cgroup::KillAll() const {
  for (const std::string& f : procs_files_) KillIn(f);
}

void Cgroup::RemoveStale() { RemoveStaleUnder(kCgroupRoot); }

void Cgroup::RemoveStaleUnder(const std::string& root) {
  std::vector<std::string> parents;
  if (IsV2(root)) {
    parents.push_back(root + "/strata");
  } else {
    for (const char* c : {"memory", "cpu", "pids"}) parents.push_back(root + "/" + c + "/strata");
  }
  for (const std::string& parent : parents) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
      std::string name = entry.path().filename().string();
      if (!name.starts_with(kGroupPrefix) || !entry.is_directory(ec)) continue;
      pid_t owner = static_cast<pid_t>(std::atoi(name.c_str() + std::strlen(kGroupPrefix)));
      if (owner <= 0 || (::kill(owner, 0) != 0 && errno == ESRCH)) RemoveGroup(entry.path().string());
    }
  }
}

}  // namespace strata::sandbox
