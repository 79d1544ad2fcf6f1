// Power loss: the workspace (its database and its data files) and the
// store's index.
//
// Each test runs a workload once to count the syncs of the database files
// (SQLite's own xSync calls, and the workspace's fdatasync of the WAL, which
// goes through the Env: ArmedVfs) and to record the state after each step.
// Then, once per cut point, it runs the workload on a fresh store and cuts
// the power (PowerCutVfs, testing/sqlite_test_vfs.h, which says what the
// model assumes): right after the k-th sync, or right after a given step
// returned. After the cut every sync fails, the steps up to the next sync
// still run, and every file SQLite wrote goes back to what it held at its
// last sync; then the workspace or store is opened again as the next boot
// would. Every time it must open, hold everything a Sync() (or a ref move)
// acknowledged before the cut, be consistent, commit, and verify clean.
//
// The workspace's data files (data/<ino>, plain files) lose at the same cut
// what was not synced: the store, and so the workspace, is opened on a
// FaultEnv (testing/fault_env.h) whose in-place files go back to what they
// held at their last sync, whole writes lost, none torn; a file created
// since the last sync of its directory is gone; a removal (the move into
// data/released/, a removal) is durable at once, the outcome that loses a
// file removed too early. So the bytes a cut must keep are only those an
// acknowledged Sync() of that very file made durable, or a commit captured
// into the store (KeptBytes); other bytes may read as older ones or zeros,
// while the namespace must still be the one after a prefix of the steps.
//
// Limits: the store's packs are plain files left as they were when the
// workload stopped (their power loss is crash_test's); the syncs of data
// files are not cut points of their own (the cut comes after the database
// syncs around them).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "store/fsck.h"
#include "store/verify.h"
#include "testing/fault_env.h"
#include "testing/sqlite_test_vfs.h"
#include "testing/workspace_test_util.h"
#include "workspace/sqlite_workspace.h"

namespace {

// The machine boots again: the store is opened next through this Env, whose
// boot id is new, so the workspace can tell (its data files may have lost
// what nobody synced, SqliteWorkspace::RepairAfterRestart).
std::unique_ptr<strata::FaultEnv> NextBoot() {
  static int boots = 0;
  auto env = std::make_unique<strata::FaultEnv>(strata::Env::Default());
  env->SetBootId("power-loss-test-boot-" + std::to_string(++boots));
  return env;
}

}  // namespace

namespace strata::workspace_testing {
namespace {

using strata::testing::PowerCutVfs;

// One power supply for the database files under dir (PowerCutVfs) and for
// the files reached through env (the FaultEnv the store, and so its
// workspaces, are opened on): env's syncs fail from the moment the VFS cuts,
// env's syncs of the WAL count as the VFS's, and RestoreToLastSync puts both
// back as the cut left them. The store's packs are left as they are (their
// power loss is crash_test's): only env's in-place files are restored.
struct ArmedVfs {
  ArmedVfs(const std::string& dir, FaultEnv& fault_env) : vfs(dir), env(fault_env) {
    env.FollowPower([this] { return vfs.cut(); }, [this](const std::string& path) { vfs.NoteExternalSync(path); });
  }
  ~ArmedVfs() { env.FollowPower(nullptr, nullptr); }
  // REQUIRES: the workspace (or store) is closed.
  void RestoreToLastSync() {
    vfs.RestoreToLastSync();
    Status s = env.RestoreInPlaceFiles();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  PowerCutVfs vfs;
  FaultEnv& env;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// ---- the workspace database

constexpr int64_t kFixedMtime = 1234567890LL * 1000000000LL;

Result<InodeId> Resolve(Workspace& ws, const std::string& path) {
  InodeId ino = kRootInode;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '/');) {
    if (part.empty()) continue;
    STRATA_ASSIGN_OR_RETURN(Attr a, ws.Lookup(ino, part));
    ino = a.ino;
  }
  return ino;
}

std::pair<InodeId, std::string> Split(Workspace& ws, const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {kRootInode, path};
  auto parent = Resolve(ws, path.substr(0, slash));
  return {parent.ok() ? *parent : 0, path.substr(slash + 1)};
}

// A regular file's bytes, and the inode that holds them (the same in every
// run of the workload: inode numbers are handed out in order).
struct FileBytes {
  InodeId ino = 0;
  size_t hash = 0;
};

// Everything a user sees of the namespace, times aside (but for an mtime the
// workload sets): path -> type, permissions, owners, size, links, target,
// xattrs, and which earlier path it is a hard link of; and apart, the bytes
// of each regular file (at its first path), which a power cut may lose
// where they were not synced.
struct State {
  std::map<std::string, std::string> names;
  std::map<std::string, FileBytes> bytes;
};

State Dump(Workspace& ws) {
  State state;
  std::map<std::string, std::string>& out = state.names;
  std::map<InodeId, std::string> first_path;
  std::function<void(InodeId, const std::string&)> walk = [&](InodeId dir, const std::string& prefix) {
    auto entries = ws.ReadDirectory(dir, 0, 100000);
    if (!entries.ok()) {
      out[prefix + "/"] = "ReadDirectory: " + entries.status().ToString();
      return;
    }
    std::map<std::string, InodeId> sorted;
    for (const DirEntry& e : *entries) sorted[e.name] = e.ino;
    for (const auto& [name, ino] : sorted) {
      const std::string path = prefix + "/" + name;
      auto a = ws.GetAttr(ino);
      if (!a.ok()) {
        out[path] = "GetAttr: " + a.status().ToString();
        continue;
      }
      std::ostringstream d;
      d << std::oct << a->mode << std::dec << " " << a->uid << ":" << a->gid << " size " << a->size << " nlink "
        << a->nlink;
      if (a->mtime_ns == kFixedMtime) d << " mtime fixed";
      auto xattrs = ws.ListXattrs(ino);
      if (xattrs.ok()) {
        std::sort(xattrs->begin(), xattrs->end());
        for (const std::string& x : *xattrs) {
          auto v = ws.GetXattr(ino, x);
          std::string value = v.ok() ? *v : v.status().ToString();
          if (value.size() > 64) value = "#" + std::to_string(std::hash<std::string>()(value));
          d << " " << x << "=" << value;
        }
      }
      auto [it, fresh] = first_path.emplace(ino, path);
      if (!fresh) d << " link of " << it->second;
      if (S_ISLNK(a->mode)) {
        auto t = ws.ReadLink(ino);
        d << " -> " << (t.ok() ? *t : t.status().ToString());
      } else if (S_ISREG(a->mode) && fresh) {
        std::string bytes(a->size, '\0');
        auto n = ws.Read(ino, 0, bytes.size(), bytes.data());
        if (!n.ok() || *n != bytes.size()) d << " unreadable";
        state.bytes[path] = FileBytes{ino, std::hash<std::string>()(bytes)};
      }
      out[path] = d.str();
      if (S_ISDIR(a->mode)) walk(ino, path);
    }
  };
  walk(kRootInode, "");
  return state;
}

std::string Diff(const std::map<std::string, std::string>& want, const std::map<std::string, std::string>& got) {
  std::ostringstream out;
  for (const auto& [k, v] : want) {
    auto it = got.find(k);
    if (it == got.end()) out << "  missing " << k << " (" << v << ")\n";
    else if (it->second != v) out << "  " << k << ": want " << v << "\n" << "  " << k << ": got  " << it->second << "\n";
  }
  for (const auto& [k, v] : got)
    if (want.count(k) == 0) out << "  extra " << k << " (" << v << ")\n";
  return out.str();
}

// One step of the workload; kSync steps acknowledge everything before them.
struct Step {
  enum Kind { kOp, kSync, kCommit } kind;
  std::function<Status(Workspace&)> run;
  // kSync: the path synced (a file's bytes become durable); kOp: a file
  // whose bytes it changes in place, or "".
  std::string file = "";
};

std::vector<Step> Workload() {
  std::vector<Step> steps;
  auto op = [&](std::function<Status(Workspace&)> f) { steps.push_back({Step::kOp, std::move(f)}); };
  auto sync = [&](std::string path) {
    steps.push_back({Step::kSync,
                     [path](Workspace& ws) -> Status {
                       STRATA_ASSIGN_OR_RETURN(InodeId ino, Resolve(ws, path));
                       return ws.Sync(ino);
                     },
                     path});
  };
  auto mkdir = [&](std::string path) {
    op([path](Workspace& ws) {
      auto [parent, name] = Split(ws, path);
      return ws.MakeDirectory(parent, name, 0755, kWho).status();
    });
  };
  auto create = [&](std::string path) {
    op([path](Workspace& ws) {
      auto [parent, name] = Split(ws, path);
      return ws.MakeNode(parent, name, S_IFREG | 0644, 0, kWho).status();
    });
  };
  auto write = [&](std::string path, uint64_t off, size_t n, uint64_t seed) {
    op([=](Workspace& ws) -> Status {
      STRATA_ASSIGN_OR_RETURN(InodeId ino, Resolve(ws, path));
      return ws.Write(ino, off, strata::testing::RandomBytes(n, seed)).status();
    });
  };
  // A write over bytes the file already holds.
  auto overwrite = [&](std::string path, uint64_t off, size_t n, uint64_t seed) {
    write(path, off, n, seed);
    steps.back().file = path;
  };
  auto rename = [&](std::string from, std::string to) {
    op([=](Workspace& ws) {
      auto [p1, n1] = Split(ws, from);
      auto [p2, n2] = Split(ws, to);
      return ws.Rename(p1, n1, p2, n2, 0);
    });
  };
  auto unlink = [&](std::string path) {
    op([path](Workspace& ws) {
      auto [parent, name] = Split(ws, path);
      return ws.Unlink(parent, name);
    });
  };
  auto symlink = [&](std::string path, std::string target) {
    op([=](Workspace& ws) {
      auto [parent, name] = Split(ws, path);
      return ws.MakeSymlink(parent, name, target, kWho).status();
    });
  };
  auto link = [&](std::string from, std::string to) {
    op([=](Workspace& ws) -> Status {
      STRATA_ASSIGN_OR_RETURN(InodeId ino, Resolve(ws, from));
      auto [parent, name] = Split(ws, to);
      return ws.Link(ino, parent, name).status();
    });
  };
  auto setxattr = [&](std::string path, std::string name, std::string value) {
    op([=](Workspace& ws) -> Status {
      STRATA_ASSIGN_OR_RETURN(InodeId ino, Resolve(ws, path));
      return ws.SetXattr(ino, name, value, 0);
    });
  };
  auto setattr = [&](std::string path, SetAttrRequest req) {
    op([=](Workspace& ws) -> Status {
      STRATA_ASSIGN_OR_RETURN(InodeId ino, Resolve(ws, path));
      return ws.SetAttr(ino, req).status();
    });
  };

  mkdir("d1");
  create("d1/f1");
  write("d1/f1", 0, 5000, 1);
  sync("");
  mkdir("d1/d2");
  symlink("s1", "d1/f1");
  link("d1/f1", "d1/d2/h1");
  setxattr("d1/f1", "user.a", "1");
  sync("d1/f1");
  create("f2");
  write("f2", 0, 3000, 2);
  rename("f2", "d1/d2/f2");
  SetAttrRequest chmod;
  chmod.mode = 0600;
  chmod.uid = 7;
  chmod.gid = 8;
  chmod.mtime_ns = kFixedMtime;
  setattr("d1/f1", chmod);
  sync("");
  // Data files: w1 synced, rewritten and synced again, then rewritten
  // unsynced; w2 never synced (its name becomes durable with the next sync of
  // data/, its bytes not), later deleted.
  create("w1");
  write("w1", 0, 6000, 11);
  create("w2");
  write("w2", 0, 3000, 12);
  sync("w1");
  overwrite("w1", 1000, 2000, 13);
  write("w1", 6000, 2000, 14);
  sync("w1");
  overwrite("w1", 0, 500, 15);
  write("w2", 3000, 1000, 16);
  // Enough rows to take the WAL through a few checkpoints.
  mkdir("many");
  for (int i = 0; i < 60; i++) {
    create("many/n" + std::to_string(i));
    setxattr("many/n" + std::to_string(i), "user.pad", std::string(2000, static_cast<char>('a' + i % 26)));
    if (i % 20 == 19) sync("many");
  }
  unlink("d1/d2/h1");
  create("f3");
  write("f3", 0, 2000, 3);
  write("f3", 2000, 2000, 4);
  op([](Workspace& ws) -> Status {
    STRATA_ASSIGN_OR_RETURN(InodeId ino, Resolve(ws, "d1/f1"));
    return ws.RemoveXattr(ino, "user.a");
  });
  setxattr("f3", "user.b", "2");
  steps.push_back({Step::kCommit, [](Workspace& ws) { return ws.Commit(CommitRequest{"mid", "t", "main"}).status(); }});
  sync("");
  // The commit released f1's data file: this write makes a new one under
  // the same name, durable only with the sync of data/ that follows.
  overwrite("d1/f1", 100, 200, 17);
  write("w1", 8000, 1000, 18);
  sync("d1/f1");
  // A file whose data is synced, then deleted: the committer thread commits
  // the deletion, syncs the WAL itself and removes the data file.
  create("gone");
  write("gone", 0, 3000, 6);
  sync("gone");
  unlink("gone");
  op([](Workspace&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    return Status::Ok();
  });
  rename("d1/d2", "d3");
  op([](Workspace& ws) { return ws.MakeNode(kRootInode, "fifo", S_IFIFO | 0600, 0, kWho).status(); });
  mkdir("d4");
  op([](Workspace& ws) { return ws.RemoveDirectory(kRootInode, "d4"); });
  unlink("s1");
  symlink("s2", "d3/f2");
  SetAttrRequest grow;
  grow.size = 10000;
  setattr("f3", grow);
  for (int i = 0; i < 10; i++) unlink("many/n" + std::to_string(i));
  unlink("w2");
  sync("f3");
  create("f4");
  write("f4", 0, 1000, 5);
  link("f4", "d3/f4b");
  rename("d1/f1", "f1b");
  unlink("many/n30");
  // No sync at the end: these may be lost, as a whole prefix.
  return steps;
}

// The workload run without a cut: the state after each step (states[i]:
// after i steps), and the inode each step's `file` named when it ran.
struct Reference {
  std::vector<State> states;
  std::vector<InodeId> file_inos;
};

std::optional<size_t> HashOf(const State& state, InodeId ino) {
  for (const auto& [path, b] : state.bytes)
    if (b.ino == ino) return b.hash;
  return std::nullopt;
}

// The bytes a cut must keep, by path, when the namespace it leaves is the
// one after i steps, of a run that acknowledged `acked` steps and ran `done`:
// a file's bytes as an acknowledged Sync of that file made them durable, or
// as a commit captured them (the store keeps them), unless a step after i
// changed them in place: data files are written ahead of the database, so
// those bytes may be on the disk while the database holds step i.
std::map<std::string, size_t> KeptBytes(const std::vector<Step>& steps, const Reference& ref, size_t i, size_t acked,
                                        size_t done) {
  std::map<InodeId, size_t> durable;
  for (size_t s = 1; s <= i; s++) {
    const Step& step = steps[s - 1];
    if (step.kind == Step::kSync && s <= acked) {
      if (auto hash = HashOf(ref.states[s], ref.file_inos[s - 1])) durable[ref.file_inos[s - 1]] = *hash;
    } else if (step.kind == Step::kCommit) {
      for (const auto& [path, b] : ref.states[s].bytes) durable[b.ino] = b.hash;
    }
  }
  for (size_t s = i + 1; s <= done; s++)
    if (steps[s - 1].kind == Step::kOp && !steps[s - 1].file.empty()) durable.erase(ref.file_inos[s - 1]);
  std::map<std::string, size_t> kept;
  for (const auto& [path, b] : ref.states[i].bytes) {
    auto it = durable.find(b.ino);
    if (it != durable.end() && it->second == b.hash) kept[path] = b.hash;
  }
  return kept;
}

class PowerLossTest : public WorkspaceTest {};

TEST_F(PowerLossTest, TheWorkspaceDatabaseKeepsEverySyncedOperationThroughAPowerCut) {
  const auto started = std::chrono::steady_clock::now();
  const std::vector<Step> steps = Workload();

  struct Run {
    uint64_t syncs = 0;
    FaultEnv::Seen data;
    size_t done = 0;   // steps run
    size_t acked = 0;  // steps acknowledged by a Sync that returned before the cut
  };
  // Runs the workload on a fresh store; with `ref`, records it as it goes.
  auto run_once = [&](const std::string& root, uint64_t cut_after, size_t cut_at_step, Reference* ref) -> Run {
    Run r;
    FaultEnv env(Env::Default());
    auto store = Store::Open(root + "/s", &env);
    EXPECT_TRUE(store.ok());
    EXPECT_TRUE(Workspace::Create(**store, "ws", std::nullopt, "main").ok());
    ArmedVfs armed(root + "/s/workspaces/ws", env);
    PowerCutVfs& vfs = armed.vfs;
    vfs.CutAfterSync(cut_after);
    {
      auto ws = Workspace::Open(**store, "ws");
      EXPECT_TRUE(ws.ok()) << ws.status().ToString();
      if (!ws.ok()) return r;
      if (ref) ref->states.push_back(Dump(**ws));
      // After the cut, the steps up to the next sync still run: the power
      // goes just before that sync, with their changes unsynced.
      for (const Step& step : steps) {
        if (vfs.cut() && step.kind != Step::kOp) break;
        if (ref) {
          auto ino = step.file.empty() ? Result<InodeId>(InodeId{0}) : Resolve(**ws, step.file);
          ref->file_inos.push_back(ino.ok() ? *ino : 0);
        }
        Status s = step.run(**ws);
        if (!vfs.cut()) {
          EXPECT_TRUE(s.ok()) << "step " << r.done << ": " << s.ToString();
        }
        r.done++;
        if (ref) ref->states.push_back(Dump(**ws));
        if (step.kind == Step::kSync && s.ok() && !vfs.cut()) r.acked = r.done;
        if (r.done == cut_at_step) vfs.CutNow();
      }
    }  // closes the workspace: SQLite checkpoints, on files the cut restores
    r.syncs = vfs.syncs();
    r.data = env.seen();
    armed.RestoreToLastSync();
    return r;
  };

  Reference ref;
  const std::vector<State>& states = ref.states;
  uint64_t total_syncs = 0;
  {
    strata::testing::TempDir dir;
    ASSERT_TRUE(Store::Init(dir.path() + "/s", StoreConfig()).ok());
    Run r = run_once(dir.path(), UINT64_MAX, SIZE_MAX, &ref);
    ASSERT_EQ(r.done, steps.size());
    total_syncs = r.syncs;
    // The data files' syncs and removals are seen at all.
    EXPECT_GE(r.data.file_syncs, 5);
    EXPECT_GE(r.data.dir_syncs, 3);
    EXPECT_GE(r.data.removals, 3);
    std::printf("data files: %d syncs, %d syncs of data/, %d removals\n", r.data.file_syncs, r.data.dir_syncs,
                r.data.removals);
  }
  ASSERT_GT(total_syncs, 3u);  // the syncs are seen at all

  // Cut points: right after each sync of the database files, and right
  // after each step that syncs or commits (the moment Sync() returns) or
  // every 10th step: the power then goes before any later sync.
  std::vector<std::pair<uint64_t, size_t>> cuts;
  for (uint64_t k = 1; k <= total_syncs + 1; k++) cuts.emplace_back(k, SIZE_MAX);
  for (size_t i = 0; i < steps.size(); i++)
    if (steps[i].kind != Step::kOp || i % 10 == 0) cuts.emplace_back(UINT64_MAX, i + 1);
  for (const auto& [k, after_step] : cuts) {
    SCOPED_TRACE(k != UINT64_MAX ? "power cut after sync " + std::to_string(k) + " of " + std::to_string(total_syncs)
                                 : "power cut after step " + std::to_string(after_step));
    strata::testing::TempDir dir;
    const std::string root = dir.path();
    ASSERT_TRUE(Store::Init(root + "/s", StoreConfig()).ok());
    Run r = run_once(root, k, after_step, nullptr);

    // The next boot.
    auto booted = NextBoot();
    auto store = Store::Open(root + "/s", booted.get());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto ws = Workspace::Open(**store, "ws");
    ASSERT_TRUE(ws.ok()) << "the workspace does not open: " << ws.status().ToString();
    const State got = Dump(**ws);
    // Operations commit in order, as a whole: the namespace is the one after
    // some prefix of the steps, at least the acknowledged ones, with the
    // bytes that prefix must keep (KeptBytes); other bytes may be lost.
    auto differences = [&](size_t i) {
      std::string d = Diff(states[i].names, got.names);
      for (const auto& [path, hash] : KeptBytes(steps, ref, i, r.acked, r.done)) {
        auto it = got.bytes.find(path);
        if (it == got.bytes.end() || it->second.hash != hash) d += "  " + path + ": synced bytes lost\n";
      }
      return d;
    };
    size_t closest = r.acked;
    std::string closest_diff = differences(r.acked);
    for (size_t i = r.acked + 1; i <= r.done && !closest_diff.empty(); i++) {
      std::string d = differences(i);
      if (std::count(d.begin(), d.end(), '\n') < std::count(closest_diff.begin(), closest_diff.end(), '\n')) {
        closest = i;
        closest_diff = d;
      }
    }
    if (!closest_diff.empty()) {
      FAIL() << "after " << r.done << " steps, " << r.acked << " acknowledged, the workspace is not the one after "
             << r.acked << " to " << r.done << " steps; differences from the closest (after " << closest << "):\n"
             << closest_diff;
    }

    // Consistency: link counts are the names, every name's inode exists, no
    // row without a name, and SQLite finds its file sound.
    std::map<InodeId, uint32_t> names;
    std::function<void(InodeId)> count = [&](InodeId parent) {
      auto entries = (*ws)->ReadDirectory(parent, 0, 100000);
      ASSERT_TRUE(entries.ok());
      for (const DirEntry& e : *entries) {
        names[e.ino]++;
        if (S_ISDIR(e.type)) count(e.ino);
      }
    };
    count(kRootInode);
    for (const auto& [ino, n] : names) {
      auto a = (*ws)->GetAttr(ino);
      ASSERT_TRUE(a.ok()) << "inode " << ino << " has a name but no row";
      if (!S_ISDIR(a->mode)) {
        EXPECT_EQ(a->nlink, n) << "inode " << ino;
      }
    }
    ASSERT_TRUE((*ws)->Sync(kRootInode).ok());
    {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open_v2((root + "/s/workspaces/ws/workspace.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
                SQLITE_OK);
      auto one = [&](const char* sql) -> std::string {
        sqlite3_stmt* st = nullptr;
        EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sql;
        std::string v = sqlite3_step(st) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                                                       : "no row";
        sqlite3_finalize(st);
        return v;
      };
      EXPECT_EQ(one("PRAGMA integrity_check"), "ok");
      EXPECT_EQ(one("SELECT count(*) FROM dentries d WHERE NOT EXISTS (SELECT 1 FROM inodes i WHERE i.ino = d.ino)"),
                "0");
      EXPECT_EQ(one("SELECT count(*) FROM inodes i WHERE i.ino != 1 AND i.nlink > 0 AND "
                    "NOT EXISTS (SELECT 1 FROM dentries d WHERE d.ino = i.ino)"),
                "0");
      EXPECT_EQ(one("SELECT count(*) FROM inodes WHERE nlink = 0"), "0");
      EXPECT_EQ(one("SELECT count(*) FROM xattrs x WHERE NOT EXISTS (SELECT 1 FROM inodes i WHERE i.ino = x.ino)"),
                "0");
      EXPECT_EQ(one("SELECT count(*) FROM extents x WHERE NOT EXISTS (SELECT 1 FROM inodes i WHERE i.ino = x.ino)"),
                "0");
      sqlite3_close(db);
    }

    // It commits what it holds, and the store is sound.
    auto out = (*ws)->Commit(CommitRequest{"after the cut", "t", "main"});
    ASSERT_TRUE(out.ok()) << "the recovered workspace does not commit: " << out.status().ToString();
    auto report = CheckStore(**store, {}, nullptr);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->ok()) << "fsck after the cut: " << report->integrity.problems.size() << " damaged, "
                              << report->missing.size() << " missing";
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("workspace: %zu cut points (%llu syncs of the database files, %zu step boundaries), %.1f s\n",
              cuts.size(), static_cast<unsigned long long>(total_syncs + 1), cuts.size() - total_syncs - 1,
              Seconds(started));
}

// Syncs from several threads at once. Each thread creates files and syncs
// them, so every Sync needs an fsync of data/ that started after its file's
// creation (FileData::Sync lets one thread's fsync of data/ stand for others
// only if it started late enough), and all of them write and sync their own
// slot of one shared file. The power goes right after the last Sync returned:
// every file a Sync acknowledged must be there with its bytes, and every slot
// of the shared file must hold its thread's last write.
TEST_F(PowerLossTest, ConcurrentSyncsKeepWhatEachOfThemAcknowledged) {
  constexpr int kThreads = 4, kFiles = 25;
  constexpr size_t kSlot = 4096;
  strata::testing::TempDir dir;
  const std::string root = dir.path();
  ASSERT_TRUE(Store::Init(root + "/s", StoreConfig()).ok());
  std::map<std::string, std::string> acked;  // file -> bytes when its Sync returned
  std::string shared_expect(kThreads * kSlot, '\0');
  {
    FaultEnv env(Env::Default());
    auto store = Store::Open(root + "/s", &env);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(Workspace::Create(**store, "ws", std::nullopt, "main").ok());
    ArmedVfs armed(root + "/s/workspaces/ws", env);
    {
      auto opened = Workspace::Open(**store, "ws");
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      Workspace& ws = **opened;
      const Attr shared = Mk(ws, kRootInode, "shared");
      std::mutex mu;
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&, t] {
          for (int i = 0; i < kFiles; i++) {
            const std::string name = "t" + std::to_string(t) + "-" + std::to_string(i);
            const std::string data = strata::testing::RandomBytes(1000 + 37 * i, t * 1000 + i);
            const std::string slot = strata::testing::RandomBytes(kSlot, 50000 + t * 1000 + i);
            auto made = ws.MakeNode(kRootInode, name, S_IFREG | 0644, 0, kWho);
            Status s = made.ok() ? ws.Write(made->ino, 0, data).status() : made.status();
            if (s.ok()) s = ws.Sync(made->ino);
            if (s.ok()) s = ws.Write(shared.ino, t * kSlot, slot).status();
            if (s.ok()) s = ws.Sync(shared.ino);
            if (!s.ok()) {
              ADD_FAILURE() << name << ": " << s.ToString();
              return;
            }
            std::lock_guard lock(mu);
            acked[name] = data;
            shared_expect.replace(t * kSlot, kSlot, slot);
          }
        });
      }
      for (std::thread& t : threads) t.join();
      armed.vfs.CutNow();
    }  // closed after the cut: nothing it writes now is kept
    ASSERT_EQ(acked.size(), size_t{kThreads * kFiles});
    EXPECT_GT(env.seen().dir_syncs, 0);
    armed.RestoreToLastSync();
  }
  auto booted = NextBoot();
  auto store = Store::Open(root + "/s", booted.get());
  ASSERT_TRUE(store.ok());
  auto ws = Workspace::Open(**store, "ws");
  ASSERT_TRUE(ws.ok()) << ws.status().ToString();
  for (const auto& [name, data] : acked) {
    auto ino = Resolve(**ws, name);
    ASSERT_TRUE(ino.ok()) << name << " was acknowledged by a Sync and is gone";
    EXPECT_EQ(ReadAll(**ws, *ino), data) << name;
  }
  auto shared = Resolve(**ws, "shared");
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(ReadAll(**ws, *shared), shared_expect);
}

// ---- the store's index

struct StoreRun {
  uint64_t syncs = 0;
  int moves = 0;
  bool stopped_early = false;
  // Per branch: its value when the last move that returned before the cut
  // returned (nullopt: absent), then every value a later move tried.
  std::map<std::string, std::vector<std::optional<Hash>>> allowed;
};

Result<Hash> PutCommit(Store& store, const std::optional<Hash>& parent, uint64_t seed) {
  STRATA_ASSIGN_OR_RETURN(Store::WriteSession session, store.BeginWrite());
  Tree tree;
  for (int i = 0; i < 3; i++) {
    std::string data = strata::testing::RandomBytes(20000, seed * 100 + i);
    STRATA_ASSIGN_OR_RETURN(PutResult put, store.Put(ObjectType::kChunk, data));
    TreeEntry e;
    e.name = "f" + std::to_string(i);
    e.mode = 0644;
    e.size = data.size();
    e.chunks = {{put.id, e.size}};
    tree.entries.push_back(std::move(e));
  }
  STRATA_ASSIGN_OR_RETURN(PutResult root, store.Put(ObjectType::kTree, EncodeTree(tree)));
  Commit c;
  c.root = root.id;
  if (parent) c.parents = {*parent};
  c.message = "c" + std::to_string(seed);
  STRATA_ASSIGN_OR_RETURN(PutResult commit, store.Put(ObjectType::kCommit, EncodeCommit(c)));
  STRATA_RETURN_IF_ERROR(store.Flush());
  return commit.id;
}

TEST(StoreIndexPowerLossTest, EveryRefMoveThatReturnedSurvivesAPowerCutInTheIndex) {
  const auto started = std::chrono::steady_clock::now();
  // cut_after_move: cut the power the moment that move (from 1) returns.
  auto run_once = [](const std::string& path, uint64_t cut_after, int cut_after_move) -> StoreRun {
    StoreRun r;
    FaultEnv env(Env::Default());
    ArmedVfs armed(path, env);
    armed.vfs.CutAfterSync(cut_after);
    auto store = Store::Open(path, &env);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return r;
    std::map<std::string, std::optional<Hash>> head;
    auto move = [&](const std::string& ref, const std::optional<Hash>& to) -> bool {
      r.allowed.try_emplace(ref, std::vector<std::optional<Hash>>{std::nullopt});
      Status s = to ? (*store)->CompareAndSwapRef(ref, head[ref], *to) : (*store)->DeleteRef(ref, *head[ref]);
      if (!armed.vfs.cut()) {
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
      head[ref] = to;
      if (++r.moves == cut_after_move) armed.vfs.CutNow();
      if (!armed.vfs.cut()) {
        r.allowed[ref] = {to};
      } else {
        r.allowed[ref].push_back(to);
      }
      return !armed.vfs.cut();
    };
    auto commit = [&](const std::string& ref, uint64_t seed) -> bool {
      auto id = PutCommit(**store, head[ref], seed);
      if (!armed.vfs.cut()) {
        EXPECT_TRUE(id.ok()) << id.status().ToString();
      }
      return id.ok() && move(ref, *id);
    };
    bool on = true;
    for (uint64_t i = 1; on && i <= 6; i++) {
      on = commit("main", i);
      if (on && i == 2) on = move("side", head["main"]);
      if (on && i == 4) on = commit("side", 100 + i);
    }
    if (on) on = move("side", std::nullopt);
    if (on) on = commit("main", 50);
    r.stopped_early = !on;
    store->reset();
    r.syncs = armed.vfs.syncs();
    armed.vfs.RestoreToLastSync();
    return r;
  };

  uint64_t total_syncs = 0;
  int total_moves = 0;
  {
    strata::testing::TempDir dir;
    ASSERT_TRUE(Store::Init(dir.path() + "/s", StoreConfig()).ok());
    StoreRun r = run_once(dir.path() + "/s", UINT64_MAX, -1);
    total_syncs = r.syncs;
    total_moves = r.moves;
  }
  EXPECT_GT(total_syncs, 3u);  // the syncs are seen at all
  // Cut points: right after each sync of index.db or its WAL, and the moment
  // each ref move returns.
  std::vector<std::pair<uint64_t, int>> cuts;
  for (uint64_t k = 1; k <= total_syncs + 1; k++) cuts.emplace_back(k, -1);
  for (int m = 1; m <= total_moves; m++) cuts.emplace_back(UINT64_MAX, m);
  for (const auto& [k, after_move] : cuts) {
    SCOPED_TRACE(k != UINT64_MAX ? "power cut after sync " + std::to_string(k) + " of " + std::to_string(total_syncs)
                                 : "power cut when ref move " + std::to_string(after_move) + " returned");
    strata::testing::TempDir dir;
    const std::string path = dir.path() + "/s";
    ASSERT_TRUE(Store::Init(path, StoreConfig()).ok());
    StoreRun r = run_once(path, k, after_move);
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << "the store does not open: " << store.status().ToString();
    for (const auto& [ref, allowed] : r.allowed) {
      auto got = (*store)->GetRef(ref);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), *got), allowed.end())
          << ref << " is at " << (*got ? (*got)->ToHex() : "nothing") << ", not where the last move that returned put it ("
          << (allowed[0] ? allowed[0]->ToHex() : "nothing") << ") or a later one";
    }
    auto verify = VerifyStore(**store, nullptr);
    ASSERT_TRUE(verify.ok()) << verify.status().ToString();
    EXPECT_TRUE(verify->ok()) << verify->problems.size() << " problems, first: " << verify->problems[0].message;
    auto fsck = CheckStore(**store, {}, nullptr);
    ASSERT_TRUE(fsck.ok()) << fsck.status().ToString();
    EXPECT_TRUE(fsck->ok()) << fsck->missing.size() << " missing objects";
    // And it keeps working.
    auto head = (*store)->GetRef("main");
    ASSERT_TRUE(head.ok());
    auto next = PutCommit(**store, *head, 999);
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_TRUE((*store)->CompareAndSwapRef("main", *head, *next).ok());
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("store index: %zu cut points (%llu syncs of index.db and its WAL, %d ref moves), %.1f s\n",
              cuts.size(), static_cast<unsigned long long>(total_syncs + 1), total_moves, Seconds(started));
}

}  // namespace
}  // namespace strata::workspace_testing
