// A Call over libfuse's fuse_req_t (libfuse_call.h).
#include "fs/libfuse/libfuse_call.h"

#include <algorithm>
#include <memory>

namespace strata::fs {

namespace {
fuse_entry_param EntryParamOf(const EntryOut& e) {
  fuse_entry_param p{};
  p.ino = e.ino;
  p.attr_timeout = e.timeout;
  p.entry_timeout = e.timeout;
  p.attr = e.attr;
  return p;
}

fuse_file_info OpenInfoOf(const OpenOut& o) {
  fuse_file_info fi{};
  fi.fh = o.fh;
  fi.keep_cache = o.keep_cache ? 1 : 0;
  fi.cache_readdir = o.cache_dir ? 1 : 0;
  return fi;
}
}  // namespace

FileInfo FileInfoOf(const fuse_file_info* fi) {
  if (fi == nullptr) return {};
  return FileInfo{fi->flags, fi->writepage != 0, fi->fh};
}

// Records written by fuse_add_direntry(_plus) into the call's buffer.
class LibfuseCall::Sink final : public DirentSink {
 public:
  explicit Sink(LibfuseCall& call) : call_(call) {}
  bool Add(std::string_view name, const struct stat& st, off_t next) override {
    std::string n(name);
    return Took(fuse_add_direntry(call_.req_, Free(), Room(), n.c_str(), &st, next));
  }
  bool AddPlus(std::string_view name, const EntryOut& entry, off_t next) override {
    std::string n(name);
    fuse_entry_param e = EntryParamOf(entry);
    return Took(fuse_add_direntry_plus(call_.req_, Free(), Room(), n.c_str(), &e, next));
  }
  size_t used() const override { return call_.dirents_used_; }
  void Rewind(size_t mark) override { call_.dirents_used_ = std::min(mark, call_.dirents_used_); }

 private:
  char* Free() { return call_.dirents_.data() + call_.dirents_used_; }
  size_t Room() const { return call_.dirents_.size() - call_.dirents_used_; }
  // libfuse returns the record's size even when it did not fit, and wrote nothing then.
  bool Took(size_t n) {
    if (n > Room()) return false;
    call_.dirents_used_ += n;
    return true;
  }
  LibfuseCall& call_;
};

LibfuseCall::LibfuseCall(fuse_req_t req) : Call(*static_cast<Context*>(fuse_req_userdata(req))), req_(req) {}

bool LibfuseCall::InSupplementaryGroup(uint32_t gid) {
  std::vector<gid_t> groups(64);
  int n = fuse_req_getgroups(req_, static_cast<int>(groups.size()), groups.data());
  if (n > static_cast<int>(groups.size())) {  // more than fitted: again with room for all
    groups.resize(static_cast<size_t>(n));
    n = fuse_req_getgroups(req_, n, groups.data());
  }
  if (n <= 0) return false;
  groups.resize(std::min(static_cast<size_t>(n), groups.size()));
  return std::find(groups.begin(), groups.end(), gid) != groups.end();
}

int LibfuseCall::ReplyEntry(const EntryOut& entry) {
  fuse_entry_param e = EntryParamOf(entry);
  return fuse_reply_entry(req_, &e);
}

int LibfuseCall::ReplyOpen(const OpenOut& open) {
  fuse_file_info fi = OpenInfoOf(open);
  return fuse_reply_open(req_, &fi);
}

int LibfuseCall::ReplyCreate(const EntryOut& entry, const OpenOut& open) {
  fuse_entry_param e = EntryParamOf(entry);
  fuse_file_info fi = OpenInfoOf(open);
  return fuse_reply_create(req_, &e, &fi);
}

DirentSink& LibfuseCall::Dirents(size_t max_bytes) {
  dirents_.assign(max_bytes, 0);
  dirents_used_ = 0;
  sink_ = std::make_unique<Sink>(*this);
  return *sink_;
}

int LibfuseCall::ReplyDirents() { return fuse_reply_buf(req_, dirents_.data(), dirents_used_); }

}  // namespace strata::fs
