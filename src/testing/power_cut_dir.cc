#include "testing/power_cut_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace strata::testing {
namespace {

std::string Canonical(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// The whole file behind fd, by pread: its offset is the code under test's.
std::string ReadAll(int fd) {
  std::string out;
  char buf[1 << 16];
  for (off_t off = 0;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("reading a synced file: " + std::to_string(errno));
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    off += n;
  }
}

}  // namespace

PowerCutDir::PowerCutDir(const std::string& dir) : dir_(Canonical(dir)) {
  durable_names_ = ListFiles();
  for (const std::string& name : durable_names_) {
    int fd = ::open((dir_ + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("opening " + dir_ + "/" + name);
    synced_[name] = ReadAll(fd);
    ::close(fd);
  }
}

bool PowerCutDir::Covers(const std::string& path) const {
  return path == dir_ || (path.size() > dir_.size() + 1 && path.compare(0, dir_.size(), dir_) == 0 &&
                          path[dir_.size()] == '/' && path.find('/', dir_.size() + 1) == std::string::npos);
}

std::set<std::string> PowerCutDir::ListFiles() const {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec))
    if (e.is_regular_file(ec)) names.insert(e.path().filename().string());
  if (ec) throw std::runtime_error("listing " + dir_ + ": " + ec.message());
  return names;
}

int PowerCutDir::Sync(int fd, const std::string& path, const std::function<int()>& sync) {
  std::lock_guard lock(mu_);
  // Taken before the sync: what it must make durable is what was there when
  // it began. Under the lock, so a removal reported meanwhile applies after.
  if (path == dir_) {
    std::set<std::string> names = ListFiles();
    int rc = sync();
    if (rc == 0) {
      durable_names_ = std::move(names);
      seen_.dir_syncs++;
    }
    return rc;
  }
  std::string bytes = ReadAll(fd);
  int rc = sync();
  if (rc == 0) {
    synced_[path.substr(dir_.size() + 1)] = std::move(bytes);
    seen_.file_syncs++;
  }
  return rc;
}

void PowerCutDir::Removed(const std::string& path) {
  std::lock_guard lock(mu_);
  const std::string name = path.substr(dir_.size() + 1);
  durable_names_.erase(name);
  // A file created under the same name later is another file.
  synced_.erase(name);
  seen_.removals++;
}

PowerCutDir::Seen PowerCutDir::seen() {
  std::lock_guard lock(mu_);
  return seen_;
}

void PowerCutDir::RestoreToLastSync() {
  std::lock_guard lock(mu_);
  for (const std::string& name : ListFiles())
    if (durable_names_.count(name) == 0) std::filesystem::remove(dir_ + "/" + name);
  for (const std::string& name : durable_names_) {
    auto it = synced_.find(name);
    std::ofstream out(dir_ + "/" + name, std::ios::binary | std::ios::trunc);
    if (it != synced_.end()) out.write(it->second.data(), static_cast<std::streamsize>(it->second.size()));
    if (!out) throw std::runtime_error("restoring " + dir_ + "/" + name);
  }
}

}  // namespace strata::testing
