// init, verify, stats: commands about the store as a whole.
#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/workspace_target.h"
#include "store/verify.h"
#include "util/progress.h"

namespace strata::cli {
namespace {

int RunInit(Globals& g, const std::string& path_arg, bool encrypt, uint64_t seal_limit) {
  std::string path = path_arg.empty() ? StorePath(g) : path_arg;
  if (seal_limit != 0 && !encrypt) return Fail(Status::InvalidArgument("--seal-limit is for an encrypted store (--encrypt)"));
  if (seal_limit != 0 && (seal_limit < StoreConfig::kMinSealLimit || seal_limit > StoreConfig::kMaxSealLimit))
    return Fail(Status::InvalidArgument("--seal-limit is from " + std::to_string(StoreConfig::kMinSealLimit) +
                                        " to 2147483648 (2^31)"));
  if (!encrypt) {
    if (Status s = Store::Init(path, StoreConfig()); !s.ok()) return Fail(s);
    fmt::print("initialized an empty strata store in {}\n", path);
    return kExitOk;
  }
  PassphraseSource source = StorePassphrase(g, path);
  source.prompt = "passphrase for the new store: ";
  source.confirm = true;
  auto passphrase = ReadPassphrase(source, "an encrypted store needs a passphrase");
  if (!passphrase.ok()) return Fail(passphrase.status());
  StoreConfig config;
  if (seal_limit != 0) config.seal_limit = seal_limit;
  // With --key-file: a second store under the master key of another (to
  // share that store's remotes), instead of a new key.
  std::optional<crypto::Key256> master;
  if (!g.key_file.empty()) {
    auto read = ReadMasterKeyFile(g.key_file);
    if (!read.ok()) {
      crypto::Wipe(*passphrase);
      return Fail(read.status());
    }
    master = *read;
  }
  Status s = master ? Store::InitEncryptedWithKey(path, config, *passphrase, *master)
                    : Store::InitEncrypted(path, config, *passphrase);
  crypto::Wipe(*passphrase);
  if (!s.ok()) return Fail(s);
  fmt::print("initialized an empty encrypted strata store in {}\n", path);
  if (master)
    fmt::print("it has the master key of {}: it seals nothing until 'strata remote add' of a remote of the store "
               "that key came from gives it key generations of its own\n",
               g.key_file);
  fmt::print("keep the passphrase safe: without it nobody can read this store ('strata key add' adds another)\n");
  return kExitOk;
}

int RunVerify(Globals& g) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  Progress progress("verify", 0, 0);
  auto report = VerifyStore(**store, &progress);
  progress.Finish();
  if (!report.ok()) return Fail(report.status());
  if (g.json) {
    nlohmann::ordered_json j;
    j["ok"] = report->ok();
    j["packs"] = report->packs;
    j["objects"] = report->objects;
    j["bytes"] = report->bytes;
    j["problems"] = nlohmann::ordered_json::array();
    for (const auto& p : report->problems)
      j["problems"].push_back({{"pack", p.pack}, {"object", p.object}, {"message", p.message}});
    PrintJson(j);
  } else {
    for (const auto& p : report->problems) {
      std::string where = p.object.empty() ? "pack " + p.pack
                                           : "object " + p.object + (p.pack.empty() ? "" : " in pack " + p.pack);
      fmt::print("damaged: {}: {}\n", where, p.message);
    }
    fmt::print("{}: {} packs, {} objects, {} read\n", report->ok() ? "ok" : "DAMAGED", report->packs,
               report->objects, HumanBytes(report->bytes));
  }
  return report->ok() ? kExitOk : kExitDamaged;
}

double Ratio(uint64_t a, uint64_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b); }

int RunStats(Globals& g) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(store.status());
  auto stats = (*store)->Stats();
  if (!stats.ok()) return Fail(stats.status());
  const StoreStats& s = *stats;
  const uint64_t objects = s.objects[1] + s.objects[2] + s.objects[3];
  // dedup: file bytes given to the store per byte of unique file data kept;
  // compression: unique bytes (all objects) per byte stored.
  const double dedup = Ratio(s.logical_bytes, s.chunk_raw_bytes);
  const double compression = Ratio(s.raw_bytes, s.payload_bytes);
  if (g.json) {
    nlohmann::ordered_json j;
    j["store"] = (*store)->path();
    j["objects"] = {{"chunk", s.objects[1]}, {"tree", s.objects[2]}, {"commit", s.objects[3]}, {"total", objects}};
    j["packs"] = s.packs;
    j["branches"] = s.refs;
    j["logical_bytes"] = s.logical_bytes;
    j["raw_bytes"] = s.raw_bytes;
    j["chunk_raw_bytes"] = s.chunk_raw_bytes;
    j["payload_bytes"] = s.payload_bytes;
    j["stored_bytes"] = s.pack_bytes;
    j["dedup_ratio"] = dedup;
    j["compression_ratio"] = compression;
    PrintJson(j);
    return kExitOk;
  }
  fmt::print("store           {}\n", (*store)->path());
  fmt::print("objects         {} ({} chunks, {} trees, {} commits)\n", objects, s.objects[1], s.objects[2],
             s.objects[3]);
  fmt::print("packs           {}\n", s.packs);
  fmt::print("branches        {}\n", s.refs);
  fmt::print("logical bytes   {} (file data given to the store)\n", HumanBytes(s.logical_bytes));
  fmt::print("unique bytes    {} (file data after dedup, before compression)\n", HumanBytes(s.chunk_raw_bytes));
  fmt::print("metadata bytes  {} (trees and commits)\n", HumanBytes(s.raw_bytes - s.chunk_raw_bytes));
  fmt::print("stored bytes    {} (pack files on disk)\n", HumanBytes(s.pack_bytes));
  fmt::print("dedup ratio     {:.2f}x (logical / unique file data)\n", dedup);
  fmt::print("compression     {:.2f}x (unique / stored payload)\n", compression);
  return kExitOk;
}

}  // namespace

void RegisterStoreCommands(CLI::App& app, Globals& g, int* exit_code) {
  auto* init = app.add_subcommand("init", "create a new, empty store");
  static std::string init_path;  // option storage must outlive parsing: the app lives for the process
  init->add_option("PATH", init_path, "where to create it (default: the selected store)");
  static bool init_encrypt = false;
  init->add_flag("--encrypt", init_encrypt,
                 "encrypt everything the store keeps under a new key, wrapped by a passphrase "
                 "(--password-file, $STRATA_PASSWORD or a prompt); with --key-file, under the master key in "
                 "that file (another store's, to share its remotes)");
  static uint64_t init_seal_limit = 0;
  init->add_option("--seal-limit", init_seal_limit,
                   "objects sealed under one key generation before the store moves to the next "
                   "(16 to 2^31, the default; recorded in config.json)");
  init->callback([&g, exit_code] { *exit_code = RunInit(g, init_path, init_encrypt, init_seal_limit); });

  auto* verify = app.add_subcommand("verify", "read every pack and object; report all damage");
  verify->add_flag("--json", g.json, "machine-readable output");
  verify->callback([&g, exit_code] { *exit_code = RunVerify(g); });

  static std::string stats_mountpoint;
  auto* stats = app.add_subcommand("stats", "store: objects, sizes, ratios; MOUNTPOINT: the daemon's counters");
  stats->add_option("MOUNTPOINT", stats_mountpoint,
                     "a mounted workspace, or any path inside it such as '.' (default: the store)");
  stats->add_flag("--json", g.json, "machine-readable output");
  static bool stats_watch = false;
  static double stats_interval = 1;
  static uint64_t stats_count = 0;
  stats->add_flag("--watch", stats_watch,
                  "MOUNTPOINT only: look again every interval, with rates per second, until Ctrl-C (redrawn on a "
                  "terminal, one block per look otherwise)");
  stats->add_option("--interval", stats_interval, "seconds between two looks of --watch (default 1)")
      ->check(FiniteRange(0.1, 3600));
  stats->add_option("--count", stats_count, "stop --watch after this many looks (default: until Ctrl-C)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  stats->callback([&g, exit_code, stats] {
    const bool interval_given = stats->count("--interval") > 0, count_given = stats->count("--count") > 0;
    if (!stats_watch && (interval_given || count_given)) {
      *exit_code = UsageError(std::string(interval_given ? "--interval" : "--count") + " goes with --watch");
      return;
    }
    if (stats_watch && (stats_mountpoint.empty() || g.json)) {
      *exit_code = UsageError(stats_mountpoint.empty() ? "--watch needs a MOUNTPOINT (it watches a mount's daemon)"
                                                       : "--watch is for people: use --json without it, once per look");
      return;
    }
    if (stats_mountpoint.empty()) {
      *exit_code = RunStats(g);
      return;
    }
    if (stats_watch) {
      OnWorkspaceArgument(&stats_mountpoint, exit_code,
                          [&g] { return WatchMountStats(g, stats_mountpoint, stats_interval, stats_count); })();
      return;
    }
    OnWorkspaceArgument(&stats_mountpoint, exit_code, [&g] { return RunMountStats(g, stats_mountpoint); })();
  });
}

}  // namespace strata::cli
