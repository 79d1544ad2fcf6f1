#include "fs/write_opens.h"

#include <unordered_set>

namespace strata::fs {

void WriteOpens::Note(uint64_t ino) {
  MutexLock lock(&mu_);
  noted_[ino] = ++next_;
}

uint64_t WriteOpens::Mark() {
  MutexLock lock(&mu_);
  return next_;
}

std::vector<uint64_t> WriteOpens::Among(const std::vector<uint64_t>& held, uint64_t mark) {
  const std::unordered_set<uint64_t> holds(held.begin(), held.end());
  MutexLock lock(&mu_);
  std::vector<uint64_t> out;
  for (auto it = noted_.begin(); it != noted_.end();) {
    if (holds.count(it->first) != 0) {
      out.push_back(it->first);
      ++it;
    } else if (it->second > mark) {
      ++it;  // noted since the list was read: kept, and not flushed this time
    } else {
      it = noted_.erase(it);
    }
  }
  return out;
}

}  // namespace strata::fs
