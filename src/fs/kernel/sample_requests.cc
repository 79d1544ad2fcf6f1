// Valid requests of every served opcode (request_encoder.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/kernel/request_builder.h"
#include "fs/kernel/request_encoder.h"

namespace strata::fs::kernel {

std::vector<SampleRequest> SampleRequests() {
  DecodeOptions session;
  session.minor = kProtocolMinor;
  DecodeOptions ext = session;
  ext.setxattr_ext = true;
  std::vector<SampleRequest> out;
  auto add = [&out](std::string name, const RequestBuilder& b, const DecodeOptions& o) {
    out.push_back({std::move(name), b.Bytes(), o});
  };
  uint64_t unique = 2;
  auto req = [&unique](uint32_t opcode, uint64_t nodeid = 1) {
    unique += 2;
    return RequestBuilder(opcode, unique, nodeid);
  };

  fuse_init_in init{};
  init.major = 7;
  init.minor = 44;
  init.max_readahead = 128 << 10;
  init.flags = FUSE_ASYNC_READ | FUSE_DO_READDIRPLUS | FUSE_MAX_PAGES | FUSE_INIT_EXT;
  init.flags2 = static_cast<uint32_t>((kInitPassthrough | kInitOverIoUring) >> 32);
  add("init", req(FUSE_INIT, 0).Struct(init), DecodeOptions{});
  add("lookup", req(FUSE_LOOKUP).Name("file.txt"), session);
  add("forget", req(FUSE_FORGET, 5).Struct(fuse_forget_in{2}), session);
  add("batch_forget",
      req(FUSE_BATCH_FORGET, 0).Struct(fuse_batch_forget_in{2, 0}).Struct(fuse_forget_one{5, 1}).Struct(fuse_forget_one{6, 4}),
      session);
  add("getattr", req(FUSE_GETATTR).Struct(fuse_getattr_in{FUSE_GETATTR_FH, 0, 3}), session);
  fuse_setattr_in setattr{};
  setattr.valid = FATTR_MODE | FATTR_SIZE | FATTR_MTIME;
  setattr.mode = 0600;
  setattr.size = 4096;
  setattr.mtime = 1700000000;
  add("setattr", req(FUSE_SETATTR, 5).Struct(setattr), session);
  add("readlink", req(FUSE_READLINK, 7), session);
  add("symlink", req(FUSE_SYMLINK).Name("link").Name("../target"), session);
  add("mknod", req(FUSE_MKNOD).Struct(fuse_mknod_in{S_IFIFO | 0644, 0, 022, 0}).Name("fifo"), session);
  add("mkdir", req(FUSE_MKDIR).Struct(fuse_mkdir_in{0755, 022}).Name("dir"), session);
  add("unlink", req(FUSE_UNLINK).Name("old"), session);
  add("rmdir", req(FUSE_RMDIR).Name("dir"), session);
  add("rename", req(FUSE_RENAME).Struct(fuse_rename_in{1}).Name("a").Name("b"), session);
  add("rename2", req(FUSE_RENAME2).Struct(fuse_rename2_in{1, 1, 0}).Name("a").Name("b"), session);
  add("link", req(FUSE_LINK).Struct(fuse_link_in{5}).Name("hard"), session);
  add("open", req(FUSE_OPEN, 5).Struct(fuse_open_in{O_RDWR, 0}), session);
  add("opendir", req(FUSE_OPENDIR).Struct(fuse_open_in{O_RDONLY | O_DIRECTORY, 0}), session);
  fuse_read_in read{};
  read.fh = 3;
  read.offset = 8192;
  read.size = 131072;
  add("read", req(FUSE_READ, 5).Struct(read), session);
  add("readdir", req(FUSE_READDIR).Struct(read), session);
  add("readdirplus", req(FUSE_READDIRPLUS).Struct(read), session);
  fuse_write_in write{};
  write.fh = 3;
  write.offset = 100;
  write.size = 11;
  add("write", req(FUSE_WRITE, 5).Struct(write).Raw("hello world"), session);
  add("statfs", req(FUSE_STATFS), session);
  fuse_release_in release{};
  release.fh = 3;
  add("release", req(FUSE_RELEASE, 5).Struct(release), session);
  add("releasedir", req(FUSE_RELEASEDIR).Struct(release), session);
  add("fsync", req(FUSE_FSYNC, 5).Struct(fuse_fsync_in{3, FUSE_FSYNC_FDATASYNC, 0}), session);
  add("fsyncdir", req(FUSE_FSYNCDIR).Struct(fuse_fsync_in{3, 0, 0}), session);
  add("flush", req(FUSE_FLUSH, 5).Struct(fuse_flush_in{3, 0, 0, 9}), session);
  fuse_setxattr_in setx{5, 0, 0, 0};
  add("setxattr", req(FUSE_SETXATTR, 5).Raw(std::string_view(reinterpret_cast<const char*>(&setx), kSetxattrInCompatSize))
                      .Name("user.key").Raw("value"), session);
  add("setxattr_ext", req(FUSE_SETXATTR, 5).Struct(setx).Name("user.key").Raw("value"), ext);
  add("getxattr", req(FUSE_GETXATTR, 5).Struct(fuse_getxattr_in{0, 0}).Name("user.key"), session);
  add("listxattr", req(FUSE_LISTXATTR, 5).Struct(fuse_getxattr_in{4096, 0}), session);
  add("removexattr", req(FUSE_REMOVEXATTR, 5).Name("user.key"), session);
  add("create", req(FUSE_CREATE).Struct(fuse_create_in{O_CREAT | O_EXCL | O_WRONLY, S_IFREG | 0644, 022, 0}).Name("new"),
      session);
  add("interrupt", RequestBuilder(FUSE_INTERRUPT, unique | kInterruptIdBit, 0).Struct(fuse_interrupt_in{unique}), session);
  add("fallocate", req(FUSE_FALLOCATE, 5).Struct(fuse_fallocate_in{3, 0, 1 << 20, 0, 0}), session);
  add("copy_file_range", req(FUSE_COPY_FILE_RANGE, 5).Struct(fuse_copy_file_range_in{3, 0, 6, 4, 0, 65536, 0}),
      session);
  add("lseek", req(FUSE_LSEEK, 5).Struct(fuse_lseek_in{3, 0, SEEK_HOLE, 0}), session);
  add("destroy", req(FUSE_DESTROY, 0), session);
  add("unserved_ioctl", req(FUSE_IOCTL, 5).Raw(std::string(32, '\0')), session);
  return out;
}

}  // namespace strata::fs::kernel
