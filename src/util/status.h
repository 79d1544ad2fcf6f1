// Status and Result<T>: errors as values.
//
// Every fallible function in strata returns a Status (or a Result<T>, which is
// a value or a Status). Both are [[nodiscard]]: a dropped error does not
// compile (-Werror); a drop that is right is written `.IgnoreError()`. A Status carries a small code that callers branch on and
// a message that is shown to the user as is, so messages name the thing that
// failed (a path, an object id, a pack) rather than the function that noticed.
//
// Thread-safety: values; no shared state.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace strata {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kNotFound,         // a path, object, ref or revision does not exist
    kAlreadyExists,    // creating something that is there
    kInvalidArgument,  // bad user input: names, paths, options, revisions
    kCorruption,       // bytes on disk do not match what they claim to be
    kIOError,          // the OS refused; errno() tells why
    kConflict,         // a compare-and-swap lost ("head moved")
    kUnsupported,      // a format version or feature this build does not know
    kUnavailable,      // a remote service did not answer in time (worth retrying later)
    kInternal,         // strata broke one of its own contracts (a bug, not the user's or the OS's doing)
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) { return {Code::kAlreadyExists, std::move(msg)}; }
  static Status InvalidArgument(std::string msg) { return {Code::kInvalidArgument, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status Conflict(std::string msg) { return {Code::kConflict, std::move(msg)}; }
  static Status Unsupported(std::string msg) { return {Code::kUnsupported, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status Internal(std::string msg) { return {Code::kInternal, "internal error: " + std::move(msg)}; }
  // An OS error: "what: strerror(err)". Keeps err so callers can map it back.
  static Status IOError(const std::string& what, int err);
  // An OS error whose message already says why (relayed from another process).
  static Status IOErrorWithMessage(std::string msg, int err) {
    Status s(Code::kIOError, std::move(msg));
    s.errno_ = err;
    return s;
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  int errno_value() const { return errno_; }
  const std::string& message() const { return message_; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsConflict() const { return code_ == Code::kConflict; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }

  // Drops this Status on purpose. Status is [[nodiscard]], so every call that
  // ignores one says so with this, and a comment beside it says why losing
  // the error is right there (a cleanup that a later open retries, say).
  void IgnoreError() const {}

  // Prefixes the message with context: "importing /x: <old message>".
  Status WithContext(const std::string& context) const;
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  int errno_ = 0;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace strata

// Returns early from the enclosing function when a Status is not ok.
#define STRATA_RETURN_IF_ERROR(expr)            \
  do {                                          \
    ::strata::Status _st = (expr);              \
    if (!_st.ok()) return _st;                  \
  } while (0)

#define STRATA_CONCAT_INNER(a, b) a##b
#define STRATA_CONCAT(a, b) STRATA_CONCAT_INNER(a, b)
// Declares `lhs` from a Result, or returns its Status from the enclosing function.
#define STRATA_ASSIGN_OR_RETURN(lhs, expr) \
  STRATA_ASSIGN_OR_RETURN_IMPL(STRATA_CONCAT(_res_, __LINE__), lhs, expr)
#define STRATA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
