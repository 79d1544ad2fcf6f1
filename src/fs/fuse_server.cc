#include "fs/fuse_server.h"

#include <csignal>
#include <vector>

#include "fs/fs_context.h"

namespace strata {

struct FuseServer::State {
  fs::Context context;
};

Result<std::unique_ptr<FuseServer>> FuseServer::Mount(Workspace* ws, const std::string& mountpoint,
                                                      const MountOptions& options) {
  std::unique_ptr<FuseServer> server(new FuseServer);
  server->state_ = std::make_unique<State>(State{fs::Context{ws, options}});

  // Options for the kernel: permissions are checked by the kernel against the
  // attributes we report; the mount is named after the workspace.
  std::vector<std::string> args = {"strata", "-o", "default_permissions", "-o", "fsname=" + options.fsname,
                                   "-o", "subtype=strata"};
  if (options.allow_other) args.insert(args.end(), {"-o", "allow_other"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());

  server->session_ = fuse_session_new(&fargs, &fs::Operations(), sizeof(fuse_lowlevel_ops), &server->state_->context);
  if (server->session_ == nullptr) return Status::IOError("cannot start a FUSE session (options refused)", EINVAL);
  if (fuse_session_mount(server->session_, mountpoint.c_str()) != 0)
    return Status::IOError("cannot mount on " + mountpoint + " (see the message above)", EIO);
  server->mounted_ = true;
  return server;
}

FuseServer::~FuseServer() {
  if (session_ == nullptr) return;
  if (mounted_) fuse_session_unmount(session_);
  fuse_session_destroy(session_);
}

Status FuseServer::Run() {
  if (fuse_set_signal_handlers(session_) != 0) return Status::IOError("cannot install signal handlers", EIO);
  fuse_loop_config* config = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(config, state_->context.options.max_threads);
  fuse_loop_cfg_set_clone_fd(config, 1);  // one kernel channel per thread: less contention
  int rc = fuse_session_loop_mt(session_, config);
  fuse_loop_cfg_destroy(config);
  fuse_remove_signal_handlers(session_);
  fuse_session_unmount(session_);
  mounted_ = false;
  if (rc != 0 && rc != -EINTR && rc != SIGINT && rc != SIGTERM && rc != SIGHUP)
    return Status::IOError("the FUSE session ended with an error", rc < 0 ? -rc : EIO);
  return Status::Ok();
}

}  // namespace strata
