// Builds one message to the kernel: the out header first, its length filled
// in when the message is taken. Internal to src/fs/kernel/.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fs/kernel/fuse_abi.h"

namespace strata::fs::kernel {

class MessageWriter {
 public:
  // error: 0 or a negative errno for a reply; the notification code for a notification (unique 0).
  MessageWriter(uint64_t unique, int32_t error) {
    fuse_out_header h{0, error, unique};
    Append(h);
  }

  template <typename T>
  MessageWriter& Append(const T& value) {
    out_.append(reinterpret_cast<const char*>(&value), sizeof(T));
    return *this;
  }
  MessageWriter& Bytes(std::string_view bytes) {
    out_.append(bytes);
    return *this;
  }

  // The finished message; the writer is spent.
  std::string Take() {
    uint32_t len = static_cast<uint32_t>(out_.size());
    std::memcpy(out_.data(), &len, sizeof(len));  // fuse_out_header.len comes first
    return std::move(out_);
  }

 private:
  std::string out_;
};

}  // namespace strata::fs::kernel
