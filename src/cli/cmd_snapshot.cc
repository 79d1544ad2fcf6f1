// import and export: moving trees between plain directories and the store.
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "cli/author.h"
#include "cli/cli.h"
#include "snapshot/exporter.h"
#include "snapshot/importer.h"
#include "store/revision.h"

namespace strata::cli {
namespace {

struct ImportArgs {
  std::string dir, branch, message, date;
  bool no_cache = false;
  size_t threads = 0;
};
struct ExportArgs {
  std::string rev, dir;
};

// $XDG_CACHE_HOME/strata (else ~/.cache/strata)/import-<id>.db, one file per
// store: the cache speaks of this machine's paths, so it stays out of the store.
Result<std::string> ImportCachePath(const Store& store) {
  std::string dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = std::string(xdg) + "/strata";
  } else {
    const char* home = std::getenv("HOME");
    dir = std::string(home && *home ? home : "/tmp") + "/.cache/strata";
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("creating the import cache directory " + dir, ec.value());
  std::string canonical = std::filesystem::weakly_canonical(store.path(), ec).string();
  if (ec) canonical = store.path();
  return dir + "/import-" + Sha256::Of(canonical.data(), canonical.size()).ToHex().substr(0, 16) + ".db";
}

// --date: "@SECONDS" (since the epoch) or "YYYY-MM-DDTHH:MM:SSZ" (UTC).
Result<int64_t> ParseCommitDate(const std::string& text) {
  auto bad = [&] {
    return Status::InvalidArgument("invalid --date '" + text + "': expected @SECONDS or YYYY-MM-DDTHH:MM:SSZ (UTC)");
  };
  if (text.starts_with("@")) {
    int64_t sec = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data() + 1, end, sec);
    // Within what nanoseconds in 64 bits hold (years 1678 to 2262).
    if (ec != std::errc() || p != end || text.size() == 1 || sec > 9'000'000'000 || sec < -9'000'000'000) return bad();
    return sec * 1'000'000'000;
  }
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end != '\0') return bad();
  const int64_t sec = ::timegm(&tm);
  if (tm.tm_year + 1900 < 1678 || tm.tm_year + 1900 > 2261) return bad();
  return sec * 1'000'000'000;
}

int RunImport(Globals& g, const ImportArgs& a) {
  ImportOptions options;
  if (!a.date.empty()) {
    auto when = ParseCommitDate(a.date);
    if (!when.ok()) return Fail(when.status());
    options.time_ns = *when;
  }
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  options.branch = a.branch;
  options.message = a.message.empty() ? "import " + a.dir : a.message;
  auto author = CommitAuthor();
  if (!author.ok()) return Fail(author.status());
  options.author = *author;
  if (!a.no_cache) {
    auto cache = ImportCachePath(**store);
    if (!cache.ok()) return Fail(cache.status());
    options.cache_path = *cache;
  }
  options.threads = a.threads;
  auto stats = ImportTree(**store, a.dir, options);
  if (!stats.ok()) return Fail(stats.status().WithContext("import of " + a.dir + " failed"));
  const ImportStats& s = *stats;
  if (g.json) {
    nlohmann::ordered_json j;
    j["commit"] = s.commit.ToHex();
    j["root"] = s.root.ToHex();
    j["branch"] = a.branch;
    j["files"] = s.files;
    j["directories"] = s.directories;
    j["symlinks"] = s.symlinks;
    j["hardlinks"] = s.hardlinks;
    j["specials"] = s.specials;
    j["bytes"] = s.bytes;
    j["bytes_read"] = s.bytes_read;
    j["cached_files"] = s.cached_files;
    j["excluded"] = s.excluded;
    j["chunks"] = s.chunks;
    j["new_chunks"] = s.new_chunks;
    j["new_bytes"] = s.new_bytes;
    j["seconds"] = s.seconds;
    j["phases"] = {{"walk", s.walk_seconds}, {"data", s.data_seconds}, {"trees", s.tree_seconds},
                   {"publish", s.publish_seconds}};
    PrintJson(j);
    return kExitOk;
  }
  fmt::print("commit {}\n", s.commit.ToHex());
  fmt::print("branch {}: {} files, {} directories, {} symlinks, {} hard links, {} special files\n", a.branch,
             s.files, s.directories, s.symlinks, s.hardlinks, s.specials);
  fmt::print("{} in {:.2f} s; read {} ({} files unchanged since the last import were not read)\n",
             HumanBytes(s.bytes), s.seconds, HumanBytes(s.bytes_read), s.cached_files);
  fmt::print("{} of {} chunks read were new; {} added to the store\n", s.new_chunks, s.chunks,
             HumanBytes(s.new_bytes));
  if (s.excluded > 0) fmt::print("left out the store's own directory, which lies inside {}\n", a.dir);
  return kExitOk;
}

int RunExport(Globals& g, const ExportArgs& a) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto id = ResolveContentRevision(**store, a.rev);
  if (!id.ok()) return Fail(id.status());
  auto commit = (*store)->GetCommit(*id);
  if (!commit.ok()) return Fail(commit.status());
  ExportOptions options;
  options.privileged = ::geteuid() == 0;
  Progress progress("export", 0, 0);
  auto stats = ExportCommit(**store, *commit, a.dir, options, &progress);
  progress.Finish();
  if (!stats.ok()) return Fail(stats.status().WithContext("export to " + a.dir + " failed"));
  fmt::print("exported {} to {}: {} files, {} directories, {} symlinks, {} hard links, {} special files, {}\n",
             ShortId(*id), a.dir, stats->files, stats->directories, stats->symlinks, stats->hardlinks,
             stats->specials, HumanBytes(stats->bytes));
  if (stats->skipped > 0)
    fmt::print(stderr, "strata: skipped {} device nodes (creating them needs root)\n", stats->skipped);
  return kExitOk;
}

}  // namespace

void RegisterSnapshotCommands(CLI::App& app, Globals& g, int* exit_code) {
  static ImportArgs imp;  // option storage must outlive parsing: the app lives for the process
  auto* import = app.add_subcommand("import", "commit a directory tree onto a branch");
  import->add_option("DIR", imp.dir, "the directory to import")->required();
  import->add_option("-b,--branch", imp.branch, "branch to commit on (created if missing)")->required();
  import->add_option("-m,--message", imp.message, "commit message");
  import->add_option("--date", imp.date,
                     "the commit's time instead of now, for a tree as it was then: @SECONDS or YYYY-MM-DDTHH:MM:SSZ");
  import->add_flag("--no-cache", imp.no_cache, "read every file, even those unchanged since the last import");
  import->add_option("--threads", imp.threads, "worker threads reading and compressing files (default: 4 per core)")
      ->check(CLI::Range(1, 256));
  import->add_flag("--json", g.json, "machine-readable output");
  import->callback([&g, exit_code] { *exit_code = RunImport(g, imp); });

  static ExportArgs exp;
  auto* exp_cmd = app.add_subcommand("export", "write a commit's tree into a new directory");
  exp_cmd->add_option("REV", exp.rev, "revision to export")->required();
  exp_cmd->add_option("DIR", exp.dir, "destination (must not exist, or be empty)")->required();
  exp_cmd->callback([&g, exit_code] { *exit_code = RunExport(g, exp); });
}

}  // namespace strata::cli
