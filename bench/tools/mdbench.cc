// mdbench — an mdtest-style metadata benchmark: how many directory and file
// operations per second a filesystem sustains, with one or more client
// processes.
//
//   mdbench --dir D [--items N] [--procs P] [--shared-dir] [--phases LIST]
//           [--drop-caches] [--json | --json-lines]
//
// P processes are forked. Each works on N items of its own, either in a
// directory of its own (default) or all in one shared directory
// (--shared-dir). The phases run in a fixed order:
//
//   dir-create   mkdir                     dir-stat    stat
//   dir-rename   rename to a new name in the same directory
//   dir-remove   rmdir
//   file-create  open(O_CREAT|O_EXCL|O_WRONLY) + close, empty files
//   file-stat    stat                      file-read   open(O_RDONLY) + close
//   file-remove  unlink
//   tree-create  a tree of depth 3 (mkdir, and empty files in the leaves), ~N entries
//   tree-remove  unlink + rmdir of that tree, bottom up
//
// Every process waits at a barrier before a phase starts and reports to it when
// done. A phase is timed from the moment the coordinating parent releases all
// processes to the moment the last one reports; ops/s = all processes' ops over
// that wall time. The barrier is a pipe the children write to and one pipe per
// child the parent writes to, so a child that crashes is noticed (the parent
// polls for exited children) instead of hanging the run.
//
// Every system call is checked. The first failure stops the benchmark with the
// path, the call and errno, exit status 1: a number from a run in which some
// operations failed would be meaningless. Stat phases also check the type
// (and, for files, size 0) of what they find; after each remove phase the
// parent checks that no item is left in the directories.
//
// --drop-caches runs `sync; echo 3 > /proc/sys/vm/drop_caches` (root only)
// before every phase, outside the timed interval, so stat and open phases
// start with cold dentry, inode and page caches; each phase reports its cache
// state ("cold" = dropped just before, "warm" = not).
//
// Output: a table on stdout; with --json one JSON object on stdout (the table
// on stderr); with --json-lines one JSON object per phase and line on stdout,
// {"phase", "ops", "seconds", "ops_per_s", "cache", "procs", "items_per_proc",
// "layout"}, for tools that read results line by line (bench/run).
//
// Only libc and the C++ standard library are used.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

namespace fs = std::filesystem;

enum Phase {
  kDirCreate,
  kDirStat,
  kDirRename,
  kDirRemove,
  kFileCreate,
  kFileStat,
  kFileRead,
  kFileRemove,
  kTreeCreate,
  kTreeRemove,
  kPhaseCount
};

constexpr const char* kPhaseNames[kPhaseCount] = {
    "dir-create",  "dir-stat",  "dir-rename",  "dir-remove",  "file-create",
    "file-stat",   "file-read", "file-remove", "tree-create", "tree-remove",
};

// The phase whose items a phase works on; kPhaseCount when it creates them.
constexpr Phase kNeeds[kPhaseCount] = {
    kPhaseCount, kDirCreate,  kDirCreate, kDirCreate,  kPhaseCount,
    kFileCreate, kFileCreate, kFileCreate, kPhaseCount, kTreeCreate,
};

// Bytes on the barrier pipes.
constexpr char kReady = 'R';   // child -> parent: phase done, all calls succeeded
constexpr char kFailed = 'F';  // child -> parent: phase done, a call failed (message already printed)
constexpr char kGo = 'G';      // parent -> child: start the next phase
constexpr char kQuit = 'Q';    // parent -> child: stop now

struct Options {
  std::string dir;
  long items = 1000;
  int procs = 1;
  bool shared_dir = false;
  bool drop_caches = false;
  bool json = false;
  bool json_lines = false;
  bool selected[kPhaseCount] = {};
};

struct PhaseResult {
  bool ran = false;
  long ops = 0;
  double seconds = 0;
  bool cold = false;
  long cached_kb_after_drop = -1;
};

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "mdbench: %s\n", msg.c_str());
  std::exit(1);
}

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: mdbench --dir D [--items N] [--procs P] [--shared-dir] [--phases LIST]\n"
               "               [--drop-caches] [--json | --json-lines]\n"
               "  --dir D         existing directory to work in (a fresh mdbench.<pid> is made inside)\n"
               "  --items N       items per process and phase (default 1000)\n"
               "  --procs P       client processes (default 1)\n"
               "  --shared-dir    all processes in one directory (default: one directory each)\n"
               "  --phases LIST   comma-separated subset of: ");
  for (int p = 0; p < kPhaseCount; ++p) std::fprintf(out, "%s%s", p ? "," : "", kPhaseNames[p]);
  std::fprintf(out,
               "\n                  (default: all; they always run in that order)\n"
               "  --drop-caches   sync; echo 3 > /proc/sys/vm/drop_caches before every phase (root)\n"
               "  --json          print one JSON object on stdout (the table goes to stderr)\n"
               "  --json-lines    print one JSON object per phase and line on stdout (the table goes to stderr)\n");
}

long ParseLong(const char* flag, const char* s, long min, long max) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
    Die(std::string(flag) + " needs an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
        "], got '" + s + "'");
  }
  return v;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  bool any_phase = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Die(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--dir") {
      o.dir = value();
    } else if (a == "--items") {
      o.items = ParseLong("--items", value(), 1, 100000000);
    } else if (a == "--procs") {
      o.procs = static_cast<int>(ParseLong("--procs", value(), 1, 1024));
    } else if (a == "--shared-dir") {
      o.shared_dir = true;
    } else if (a == "--drop-caches") {
      o.drop_caches = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--json-lines") {
      o.json_lines = true;
    } else if (a == "--phases") {
      std::string list = value();
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        std::string name = list.substr(start, comma - start);
        int p = 0;
        while (p < kPhaseCount && name != kPhaseNames[p]) ++p;
        if (p == kPhaseCount) Die("unknown phase '" + name + "' (see --help)");
        o.selected[p] = true;
        any_phase = true;
        start = comma + 1;
      }
    } else if (a == "-h" || a == "--help") {
      Usage(stdout);
      std::exit(0);
    } else {
      Usage(stderr);
      Die("unknown argument '" + std::string(a) + "'");
    }
  }
  if (o.dir.empty()) {
    Usage(stderr);
    Die("--dir is required");
  }
  if (!any_phase) {
    for (bool& s : o.selected) s = true;
  }
  for (int p = 0; p < kPhaseCount; ++p) {
    if (o.selected[p] && kNeeds[p] != kPhaseCount && !o.selected[kNeeds[p]]) {
      Die(std::string("phase ") + kPhaseNames[p] + " needs phase " + kPhaseNames[kNeeds[p]]);
    }
  }
  return o;
}

std::string ErrnoText(int err) {
  return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")";
}

double Now() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// write()/read() exactly one byte, retrying on EINTR.
bool WriteByte(int fd, char c) {
  for (;;) {
    ssize_t n = write(fd, &c, 1);
    if (n == 1) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// Returns 1 with *c set, 0 at end of file, -1 on error.
int ReadByte(int fd, char* c) {
  for (;;) {
    ssize_t n = read(fd, c, 1);
    if (n >= 0) return static_cast<int>(n);
    if (errno != EINTR) return -1;
  }
}

// --- the work of one client process ------------------------------------------

// The tree made by tree-create: depth 3 below its root, `fanout` directories
// per directory, `files` empty files in each leaf directory.
struct TreeShape {
  int fanout = 2;
  long files = 1;
  long entries() const {  // mkdirs (root included) + files
    long dirs = 1 + fanout + fanout * fanout + fanout * fanout * fanout;
    return dirs + static_cast<long>(fanout) * fanout * fanout * files;
  }
};

TreeShape ShapeFor(long items) {
  TreeShape t;
  // A fan-out of 4 gives 85 directories and 64 leaves; small runs use 2 (15, 8).
  t.fanout = items >= 400 ? 4 : 2;
  long dirs = 1 + t.fanout + t.fanout * t.fanout + t.fanout * t.fanout * t.fanout;
  long leaves = static_cast<long>(t.fanout) * t.fanout * t.fanout;
  t.files = items > dirs ? (items - dirs + leaves / 2) / leaves : 0;
  if (t.files < 1) t.files = 1;
  return t;
}

// Operations one phase makes in each process.
long OpsPerProc(const Options& o, Phase p) {
  if (p == kTreeCreate || p == kTreeRemove) return ShapeFor(o.items).entries();
  return o.items;
}

class Client {
 public:
  Client(const Options& o, int rank, const std::string& workdir) : rank_(rank), shape_(ShapeFor(o.items)) {
    std::string prefix = workdir + "/";
    std::string tag = std::to_string(rank) + ".";
    for (long i = 0; i < o.items; ++i) {
      dirs_.push_back(prefix + "d." + tag + std::to_string(i));
      renamed_.push_back(prefix + "d." + tag + std::to_string(i) + ".renamed");
      files_.push_back(prefix + "f." + tag + std::to_string(i));
    }
    tree_root_ = prefix + "t." + std::to_string(rank);
  }

  // Runs one phase; false (after printing why) at the first failed call.
  bool Run(Phase p) {
    switch (p) {
      case kDirCreate:
        for (const auto& d : dirs_) {
          if (mkdir(d.c_str(), 0755) != 0) return Fail("mkdir", d);
        }
        return true;
      case kDirStat:
        for (const auto& d : dirs_) {
          if (!StatIs(d, S_IFDIR)) return false;
        }
        return true;
      case kDirRename:
        for (size_t i = 0; i < dirs_.size(); ++i) {
          if (rename(dirs_[i].c_str(), renamed_[i].c_str()) != 0) {
            return Fail("rename", dirs_[i] + " -> " + renamed_[i]);
          }
        }
        renamed_done_ = true;
        return true;
      case kDirRemove:
        for (const auto& d : renamed_done_ ? renamed_ : dirs_) {
          if (rmdir(d.c_str()) != 0) return Fail("rmdir", d);
        }
        return true;
      case kFileCreate:
        for (const auto& f : files_) {
          int fd = open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
          if (fd < 0) return Fail("open(O_CREAT|O_EXCL|O_WRONLY)", f);
          if (close(fd) != 0) return Fail("close", f);
        }
        return true;
      case kFileStat:
        for (const auto& f : files_) {
          if (!StatIs(f, S_IFREG)) return false;
        }
        return true;
      case kFileRead:
        for (const auto& f : files_) {
          int fd = open(f.c_str(), O_RDONLY | O_CLOEXEC);
          if (fd < 0) return Fail("open(O_RDONLY)", f);
          if (close(fd) != 0) return Fail("close", f);
        }
        return true;
      case kFileRemove:
        for (const auto& f : files_) {
          if (unlink(f.c_str()) != 0) return Fail("unlink", f);
        }
        return true;
      case kTreeCreate:
        return TreeCreate(tree_root_, 0);
      case kTreeRemove:
        return TreeRemove(tree_root_, 0);
      case kPhaseCount:
        break;
    }
    return true;
  }

 private:
  bool Fail(const char* call, const std::string& path) {
    int err = errno;
    std::fprintf(stderr, "mdbench: process %d: %s %s failed: %s\n", rank_, call, path.c_str(),
                 ErrnoText(err).c_str());
    return false;
  }

  bool StatIs(const std::string& path, mode_t type) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return Fail("stat", path);
    if ((st.st_mode & S_IFMT) != type) {
      std::fprintf(stderr, "mdbench: process %d: stat %s: mode %o is not a %s\n", rank_, path.c_str(),
                   static_cast<unsigned>(st.st_mode), type == S_IFDIR ? "directory" : "regular file");
      return false;
    }
    if (type == S_IFREG && st.st_size != 0) {
      std::fprintf(stderr, "mdbench: process %d: stat %s: size %lld, expected an empty file\n", rank_,
                   path.c_str(), static_cast<long long>(st.st_size));
      return false;
    }
    return true;
  }

  bool TreeCreate(const std::string& dir, int depth) {
    if (mkdir(dir.c_str(), 0755) != 0) return Fail("mkdir", dir);
    if (depth == 3) {
      for (long i = 0; i < shape_.files; ++i) {
        std::string f = dir + "/f." + std::to_string(i);
        int fd = open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) return Fail("open(O_CREAT|O_EXCL|O_WRONLY)", f);
        if (close(fd) != 0) return Fail("close", f);
      }
      return true;
    }
    for (int i = 0; i < shape_.fanout; ++i) {
      if (!TreeCreate(dir + "/d." + std::to_string(i), depth + 1)) return false;
    }
    return true;
  }

  bool TreeRemove(const std::string& dir, int depth) {
    if (depth == 3) {
      for (long i = 0; i < shape_.files; ++i) {
        std::string f = dir + "/f." + std::to_string(i);
        if (unlink(f.c_str()) != 0) return Fail("unlink", f);
      }
    } else {
      for (int i = 0; i < shape_.fanout; ++i) {
        if (!TreeRemove(dir + "/d." + std::to_string(i), depth + 1)) return false;
      }
    }
    if (rmdir(dir.c_str()) != 0) return Fail("rmdir", dir);
    return true;
  }

  int rank_;
  TreeShape shape_;
  std::vector<std::string> dirs_, renamed_, files_;
  std::string tree_root_;
  bool renamed_done_ = false;
};

// Child process body: wait for "go", run the phase, report; until told to quit.
[[noreturn]] void ChildMain(const Options& o, int rank, const std::string& workdir, int go_fd, int ready_fd) {
  Client client(o, rank, workdir);
  bool failed = false;
  for (int p = 0; p < kPhaseCount; ++p) {
    if (!o.selected[p]) continue;
    char c = 0;
    int n = ReadByte(go_fd, &c);
    if (n != 1 || c != kGo) _exit(n == 1 && c == kQuit ? 0 : 1);
    // After a failure the child keeps joining the barriers but does no work;
    // the parent stops everyone at the end of the phase that failed.
    bool ok = !failed && client.Run(static_cast<Phase>(p));
    if (!ok) failed = true;
    if (!WriteByte(ready_fd, ok ? kReady : kFailed)) _exit(1);
  }
  char c = 0;
  ReadByte(go_fd, &c);  // the parent's final kQuit (or end of file)
  _exit(failed ? 1 : 0);
}

// --- the coordinating parent ---------------------------------------------------

class Coordinator {
 public:
  explicit Coordinator(const Options& o) : o_(o) {}

  ~Coordinator() { KillChildren(); }

  void Start(const std::vector<std::string>& workdirs) {
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) Die("pipe: " + ErrnoText(errno));
    ready_fd_ = ready[0];
    std::fflush(nullptr);  // children must not inherit buffered output
    for (int r = 0; r < o_.procs; ++r) {
      int go[2];
      if (pipe2(go, O_CLOEXEC) != 0) Die("pipe: " + ErrnoText(errno));
      pid_t pid = fork();
      if (pid < 0) Die("fork: " + ErrnoText(errno));
      if (pid == 0) {
        close(go[1]);
        close(ready[0]);
        for (int fd : go_fds_) close(fd);
        ChildMain(o_, r, workdirs[o_.shared_dir ? 0 : r], go[0], ready[1]);
      }
      close(go[0]);
      go_fds_.push_back(go[1]);
      pids_.push_back(pid);
    }
    close(ready[1]);
  }

  // Releases every child into the next phase.
  void Release() {
    for (int fd : go_fds_) {
      if (!WriteByte(fd, kGo)) Die("write to a child's barrier pipe: " + ErrnoText(errno));
    }
  }

  // Waits until every child reported the phase done; false if any failed.
  bool Collect() {
    bool ok = true;
    for (int got = 0; got < o_.procs;) {
      struct pollfd pfd = {ready_fd_, POLLIN, 0};
      int n = poll(&pfd, 1, 1000);
      if (n < 0 && errno != EINTR) Die("poll: " + ErrnoText(errno));
      if (n > 0) {
        char c = 0;
        int r = ReadByte(ready_fd_, &c);
        if (r < 0) Die("read from the barrier pipe: " + ErrnoText(errno));
        if (r == 0) Die("all client processes ended in the middle of a phase");
        if (c != kReady) ok = false;
        ++got;
        continue;
      }
      CheckChildrenAlive();
    }
    return ok;
  }

  // Tells every child to stop and waits for them; true if all exited with 0.
  bool Finish() {
    for (int fd : go_fds_) {
      WriteByte(fd, kQuit);
      close(fd);
    }
    go_fds_.clear();
    bool ok = true;
    for (pid_t pid : pids_) {
      int status = 0;
      while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) Die("waitpid: " + ErrnoText(errno));
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ok = false;
    }
    pids_.clear();
    close(ready_fd_);
    return ok;
  }

 private:
  void CheckChildrenAlive() {
    for (pid_t pid : pids_) {
      int status = 0;
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        std::string why = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                              : "exited with status " + std::to_string(WEXITSTATUS(status));
        // The others read end-of-file on their barrier pipes when this process exits, and stop.
        Die("a client process (pid " + std::to_string(pid) + ") " + why + " in the middle of a phase");
      }
    }
  }

  void KillChildren() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
    pids_.clear();
  }

  const Options& o_;
  int ready_fd_ = -1;
  std::vector<int> go_fds_;
  std::vector<pid_t> pids_;
};

long CachedKb() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "Cached: %ld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb;
}

void DropCaches() {
  sync();
  int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0) Die("open /proc/sys/vm/drop_caches (--drop-caches needs root): " + ErrnoText(errno));
  if (write(fd, "3\n", 2) != 2) Die("write /proc/sys/vm/drop_caches: " + ErrnoText(errno));
  if (close(fd) != 0) Die("close /proc/sys/vm/drop_caches: " + ErrnoText(errno));
}

// Entries whose names start with any of `prefixes` in `dir`, listed with the
// standard library (untimed, after a remove phase).
long CountLeft(const std::string& dir, std::initializer_list<std::string_view> prefixes) {
  std::error_code ec;
  long n = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    for (std::string_view p : prefixes) {
      if (name.starts_with(p)) {
        ++n;
        break;
      }
    }
  }
  if (ec) Die("list " + dir + ": " + ec.message());
  return n;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void PrintTable(FILE* out, const Options& o, const std::string& base, const PhaseResult* res) {
  TreeShape t = ShapeFor(o.items);
  std::fprintf(out,
               "mdbench: %s, %ld items per process, %d process%s, %s; "
               "tree: depth 3, fan-out %d, %ld files per leaf\n",
               base.c_str(), o.items, o.procs, o.procs == 1 ? "" : "es",
               o.shared_dir ? "one shared directory" : "one directory per process", t.fanout, t.files);
  std::fprintf(out, "%-12s %10s %10s %12s  %s\n", "phase", "ops", "seconds", "ops/s", "cache");
  for (int p = 0; p < kPhaseCount; ++p) {
    if (!res[p].ran) continue;
    std::fprintf(out, "%-12s %10ld %10.4f %12.0f  %s\n", kPhaseNames[p], res[p].ops, res[p].seconds,
                 res[p].ops / res[p].seconds, res[p].cold ? "cold (dropped before)" : "warm");
  }
}

void PrintJson(const Options& o, const std::string& base, const PhaseResult* res) {
  TreeShape t = ShapeFor(o.items);
  std::printf("{\"tool\": \"mdbench\", \"params\": {\"dir\": %s, \"items_per_proc\": %ld, \"procs\": %d, "
              "\"layout\": \"%s\", \"drop_caches\": %s, \"tree\": {\"depth\": 3, \"fanout\": %d, "
              "\"files_per_leaf\": %ld, \"entries\": %ld}},\n \"phases\": {",
              JsonString(base).c_str(), o.items, o.procs, o.shared_dir ? "shared-dir" : "dir-per-proc",
              o.drop_caches ? "true" : "false", t.fanout, t.files, t.entries());
  bool first = true;
  for (int p = 0; p < kPhaseCount; ++p) {
    if (!res[p].ran) continue;
    std::printf("%s\n  \"%s\": {\"ops\": %ld, \"seconds\": %.6f, \"ops_per_s\": %.1f, \"cache\": \"%s\"",
                first ? "" : ",", kPhaseNames[p], res[p].ops, res[p].seconds, res[p].ops / res[p].seconds,
                res[p].cold ? "cold" : "warm");
    if (res[p].cold) std::printf(", \"cached_kb_after_drop\": %ld", res[p].cached_kb_after_drop);
    std::printf("}");
    first = false;
  }
  std::printf("}}\n");
}

// One line per phase: easy to append to, grep and parse without a JSON parser.
void PrintJsonLines(const Options& o, const PhaseResult* res) {
  for (int p = 0; p < kPhaseCount; ++p) {
    if (!res[p].ran) continue;
    std::printf("{\"phase\": \"%s\", \"ops\": %ld, \"seconds\": %.6f, \"ops_per_s\": %.1f, \"cache\": \"%s\", "
                "\"procs\": %d, \"items_per_proc\": %ld, \"layout\": \"%s\"",
                kPhaseNames[p], res[p].ops, res[p].seconds, res[p].ops / res[p].seconds, res[p].cold ? "cold" : "warm",
                o.procs, o.items, o.shared_dir ? "shared-dir" : "dir-per-proc");
    if (res[p].cold) std::printf(", \"cached_kb_after_drop\": %ld", res[p].cached_kb_after_drop);
    std::printf("}\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  signal(SIGPIPE, SIG_IGN);  // a dead child shows up as an error, not a silent exit

  struct stat st;
  if (stat(o.dir.c_str(), &st) != 0) Die("--dir " + o.dir + ": " + ErrnoText(errno));
  if (!S_ISDIR(st.st_mode)) Die("--dir " + o.dir + " is not a directory");

  // Untimed setup: a fresh base directory and the processes' working directories.
  std::string base = o.dir + "/mdbench." + std::to_string(getpid());
  if (mkdir(base.c_str(), 0755) != 0) Die("mkdir " + base + ": " + ErrnoText(errno));
  std::vector<std::string> workdirs;
  if (o.shared_dir) {
    workdirs.push_back(base + "/shared");
  } else {
    for (int r = 0; r < o.procs; ++r) workdirs.push_back(base + "/p" + std::to_string(r));
  }
  for (const auto& w : workdirs) {
    if (mkdir(w.c_str(), 0755) != 0) Die("mkdir " + w + ": " + ErrnoText(errno));
  }

  PhaseResult res[kPhaseCount];
  bool ok = true;
  {
    Coordinator coord(o);
    coord.Start(workdirs);
    for (int p = 0; p < kPhaseCount && ok; ++p) {
      if (!o.selected[p]) continue;
      if (o.drop_caches) {
        DropCaches();
        res[p].cold = true;
        res[p].cached_kb_after_drop = CachedKb();
      }
      double t0 = Now();
      coord.Release();
      ok = coord.Collect();
      double t1 = Now();
      if (!ok) {
        std::fprintf(stderr, "mdbench: phase %s failed (see above); stopping\n", kPhaseNames[p]);
        break;
      }
      res[p].ran = true;
      res[p].seconds = t1 - t0;
      res[p].ops = OpsPerProc(o, static_cast<Phase>(p)) * o.procs;
      // Untimed check that a remove phase left nothing behind.
      const char* prefix = p == kDirRemove ? "d." : p == kFileRemove ? "f." : p == kTreeRemove ? "t." : nullptr;
      if (prefix != nullptr) {
        for (const auto& w : workdirs) {
          long left = CountLeft(w, {prefix});
          if (left != 0) {
            std::fprintf(stderr, "mdbench: after %s, %ld entries named %s* are still in %s\n", kPhaseNames[p],
                         left, prefix, w.c_str());
            ok = false;
          }
        }
      }
    }
    if (!coord.Finish() && ok) {
      std::fprintf(stderr, "mdbench: a client process exited with an error\n");
      ok = false;
    }
  }
  if (!ok) {
    std::fprintf(stderr, "mdbench: FAILED; what was made is left in %s for inspection\n", base.c_str());
    return 1;
  }

  // Untimed cleanup of whatever the selected phases did not remove.
  std::error_code ec;
  fs::remove_all(base, ec);
  if (ec) Die("remove " + base + ": " + ec.message());

  if (o.json) {
    PrintTable(stderr, o, base, res);
    PrintJson(o, base, res);
  } else if (o.json_lines) {
    PrintTable(stderr, o, base, res);
    PrintJsonLines(o, res);
  } else {
    PrintTable(stdout, o, base, res);
  }
  return 0;
}
