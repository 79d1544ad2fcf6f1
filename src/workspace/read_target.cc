#include "workspace/read_target.h"

#include <cstdlib>
#include <cstring>

namespace strata {

char* ReadTarget::Space(size_t n) {
  if (!gathered()) {
    char* at = flat_ + size_;
    size_ += n;
    return at;
  }
  if (size_ + n > capacity_) std::abort();  // the reader's bug: never more than it was asked for
  if (own_.empty()) own_ = Buffer(capacity_);
  char* at = own_.data() + own_used_;
  own_used_ += n;
  AddPiece(at, n);
  return at;
}

void ReadTarget::Share(const std::shared_ptr<const Buffer>& chunk, std::string_view bytes) {
  if (!gathered() || pieces_.size() >= kMaxPieces) {
    std::memcpy(Space(bytes.size()), bytes.data(), bytes.size());
    return;
  }
  if (size_ + bytes.size() > capacity_) std::abort();
  if (held_.empty() || held_.back() != chunk) held_.push_back(chunk);
  AddPiece(bytes.data(), bytes.size());
}

void ReadTarget::AddPiece(const char* data, size_t n) {
  size_ += n;
  if (n == 0) return;
  if (!pieces_.empty()) {
    iovec& last = pieces_.back();
    if (static_cast<const char*>(last.iov_base) + last.iov_len == data) {  // continues the last piece
      last.iov_len += n;
      return;
    }
  }
  pieces_.push_back(iovec{const_cast<char*>(data), n});  // writev only reads it
}

}  // namespace strata
