#include "fs/fuse_server.h"

#include <cstdio>

#include "fs/fs_context.h"
#include "fs/in_flight.h"
#include "fs/libfuse/request_loop.h"
#include "fs/passthrough.h"
#include "fs/transport.h"

namespace strata {

const char* FuseTransportName(FuseTransport t) {
  switch (t) {
    case FuseTransport::kStrata: return "strata";
    case FuseTransport::kStrataUring: return "strata-uring";
    case FuseTransport::kLibfuse: break;
  }
  return "libfuse";
}

struct FuseServer::State {
  fs::Context context;
  fs::OpStats stats;
  fs::RequestLoopCounters loop;
  fs::InFlight in_flight;
  fs::PassthroughCounters passthrough;
  fs::WriteOpens write_opens;
  // Last: it serves with everything above until it is gone.
  std::unique_ptr<fs::Transport> transport;
};

Result<std::unique_ptr<FuseServer>> FuseServer::Mount(Workspace* ws, const std::string& mountpoint,
                                                      const MountOptions& options) {
  std::unique_ptr<FuseServer> server(new FuseServer);
  server->state_ = std::make_unique<State>();
  State& state = *server->state_;
  state.context = fs::Context{ws, options, &state.stats};
  state.context.write_opens = &state.write_opens;
  const fs::TransportParts parts{&state.context, &state.in_flight, &state.loop, &state.passthrough};
  auto transport = options.transport == FuseTransport::kLibfuse ? fs::MountWithLibfuse(mountpoint, parts)
                                                                : fs::MountWithStrataCodec(mountpoint, parts);
  if (!transport.ok()) return transport.status();
  state.transport = std::move(*transport);
  // Best effort: without it sequential reads still work, in 128 KiB steps.
  if (Status s = fs::SetKernelReadAhead(mountpoint, options.readahead_kib); !s.ok())
    std::fprintf(stderr, "strata: kernel read-ahead left at its default: %s\n", s.message().c_str());
  return server;
}

FuseServer::~FuseServer() = default;  // the transport unmounts if still mounted

ServedCounters FuseServer::Counters() const {
  ServedCounters c;
  c.operations = state_->stats.Counts();
  c.transport = state_->transport->Name();
  const fs::RequestLoopCounters& loop = state_->loop;
  c.inline_requests = loop.inline_requests.load(std::memory_order_relaxed);
  c.worker_requests = loop.worker_requests.load(std::memory_order_relaxed);
  c.caught_polling = loop.caught_polling.load(std::memory_order_relaxed);
  c.sleeps = loop.sleeps.load(std::memory_order_relaxed);
  const fs::PassthroughCounters& p = state_->passthrough;
  c.passthrough = {p.on.load(), p.opens.load(std::memory_order_relaxed), p.write_opens.load(std::memory_order_relaxed),
                   p.declined.load(std::memory_order_relaxed), p.held.load(std::memory_order_relaxed)};
  const fs::Transport::RequestPaths paths = state_->transport->Paths();
  c.ring_requests = paths.over_ring;
  c.device_requests = paths.read_from_device;
  return c;
}

void FuseServer::FlushKernelPages() {
  // Data written through a shared mapping (or with the writeback cache) sits
  // in the kernel's dirty pages until it writes them back. The CLI's syncfs
  // starts that writeback, but the kernel does not wait for a FUSE daemon's
  // answers in syncfs or sync (it skips FUSE mappings when waiting, so that a
  // stuck daemon cannot hang sync), so the WRITE requests may still be on the
  // way when the cut is taken. Invalidating a file's pages writes back every
  // dirty one, waits for the answer to each write (served by the transport's
  // other threads meanwhile) and drops the file's cached pages, which the
  // next access reads again. From the control socket's thread, no workspace
  // lock held; ENOENT only means the kernel had nothing of that inode.
  // Only files opened for writing can hold such pages (fs/write_opens.h);
  // when the kernel opens files without asking, that is not known, and
  // every file it holds is flushed.
  const uint64_t mark = state_->write_opens.Mark();
  std::vector<InodeId> held = state_->context.ws->HeldFiles();
  if (!state_->context.no_open) held = state_->write_opens.Among(held, mark);
  for (InodeId ino : held) (void)state_->transport->InvalInode(ino, 0, 0);
}

void FuseServer::Invalidate(const StaleCaches& stale) {
  // From the control socket's thread, with no workspace lock held: the kernel
  // takes the directory's lock for each notification, which a request being
  // served may hold while it waits for the workspace. ENOENT only means the
  // kernel had nothing cached.
  for (const auto& [parent, name] : stale.entries) (void)state_->transport->InvalEntry(parent, name);
  // A directory's cached listing goes with its pages (ops_dir.cc); of other
  // inodes only the attributes.
  Workspace& ws = *state_->context.ws;
  for (InodeId ino : stale.inodes) {
    auto a = ws.GetAttr(ino);
    const bool directory = ino == kRootInode || (a.ok() && S_ISDIR(a->mode));
    (void)state_->transport->InvalInode(ino, directory ? 0 : -1, 0);
  }
}

void FuseServer::InvalidateAfterSwap(const StaleCaches& stale) {
  if (stale.entries.empty() && stale.inodes.empty()) return;
  Invalidate(stale);
  // A reply computed from the old namespace just before the swap may reach
  // the kernel after the invalidations above, and be cached as current (an
  // entry naming an inode of the old tree, for the entry timeout). Once every
  // request that started before this point has answered, none can: the same
  // invalidations again clear what such a reply left. A request stuck longer
  // (a read waiting on a slow remote) only delays this round, never blocks it.
  if (!state_->in_flight.WaitForEarlier(kSwapDrainLimit))
    std::fprintf(stderr, "strata: requests begun before a content swap still running after %lld ms; "
                         "invalidating again without them\n",
                 static_cast<long long>(kSwapDrainLimit.count()));
  Invalidate(stale);
}

Status FuseServer::Run(const std::function<void()>& serving, const std::function<void()>& before_unmount) {
  return state_->transport->Run(serving, before_unmount);
}

}  // namespace strata
