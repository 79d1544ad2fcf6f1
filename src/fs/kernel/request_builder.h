// Builds request bytes as the kernel lays them out, for the unit tests and
// the fuzz target's seeds (strata itself only decodes requests).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fs/kernel/fuse_abi.h"

namespace strata::fs::kernel {

class RequestBuilder {
 public:
  RequestBuilder(uint32_t opcode, uint64_t unique, uint64_t nodeid) {
    header_.opcode = opcode;
    header_.unique = unique;
    header_.nodeid = nodeid;
    header_.uid = 1000;
    header_.gid = 1000;
    header_.pid = 4242;
  }

  template <typename T>
  RequestBuilder& Struct(const T& value) {
    body_.append(reinterpret_cast<const char*>(&value), sizeof(T));
    return *this;
  }
  // A string and its terminating NUL.
  RequestBuilder& Name(std::string_view name) {
    body_.append(name);
    body_.push_back('\0');
    return *this;
  }
  RequestBuilder& Raw(std::string_view bytes) {
    body_.append(bytes);
    return *this;
  }
  fuse_in_header& header() { return header_; }

  // The request, with len set to its real size unless len_override says otherwise.
  std::vector<uint8_t> Bytes(int64_t len_override = -1) const {
    fuse_in_header h = header_;
    h.len = len_override >= 0 ? static_cast<uint32_t>(len_override)
                              : static_cast<uint32_t>(sizeof(fuse_in_header) + body_.size());
    std::vector<uint8_t> out(sizeof(h) + body_.size());
    std::memcpy(out.data(), &h, sizeof(h));
    if (!body_.empty()) std::memcpy(out.data() + sizeof(h), body_.data(), body_.size());
    return out;
  }

 private:
  fuse_in_header header_{};
  std::string body_;
};

}  // namespace strata::fs::kernel
