#include "util/status.h"

#include <cstring>

namespace strata {

Status Status::IOError(const std::string& what, int err) {
  Status s(Code::kIOError, what + ": " + std::strerror(err));
  s.errno_ = err;
  return s;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  Status s = *this;
  s.message_ = context + ": " + message_;
  return s;
}

std::string Status::ToString() const { return ok() ? "ok" : message_; }

}  // namespace strata
