#include "crypto/kernel_keyring.h"

#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "crypto/aead.h"

namespace strata::crypto {
namespace {

// keyrings(7) permission bits (not in the kernel's uapi header).
constexpr uint32_t kPossessorAll = 0x3f000000;
constexpr uint32_t kUserView = 0x00010000, kUserRead = 0x00020000, kUserWrite = 0x00040000,
                   kUserSearch = 0x00080000, kUserSetattr = 0x00200000;
// The owning uid may read, find, replace, time out and drop the key from any
// of its processes; it may not link it elsewhere. "Other" and "group" get
// nothing.
constexpr uint32_t kKeptKeyPerm = kPossessorAll | kUserView | kUserRead | kUserWrite | kUserSearch | kUserSetattr;
constexpr const char* kKeyType = "user";

long Keyctl(int op, unsigned long a = 0, unsigned long b = 0, unsigned long c = 0, unsigned long d = 0) {
  return ::syscall(SYS_keyctl, op, a, b, c, d);
}

Status KeyringError(const std::string& what, int err) {
  if (err == ENOSYS || err == EPERM || err == EOPNOTSUPP)
    return Status::Unsupported("the kernel keyring cannot be used here (" + what + ": " + std::strerror(err) +
                               "; a kernel without keyring support, or a seccomp filter that refuses its calls, "
                               "as containers' default profiles do)");
  return Status::IOError("the kernel keyring: " + what, err);
}

// Whether a search that found nothing says "no such key" (never kept,
// dropped, timed out) rather than a failure.
bool IsAbsent(int err) { return err == ENOKEY || err == EKEYEXPIRED || err == EKEYREVOKED; }

Result<long> Search(const std::string& description) {
  long id = Keyctl(KEYCTL_SEARCH, static_cast<unsigned long>(KEY_SPEC_USER_KEYRING),
                   reinterpret_cast<unsigned long>(kKeyType), reinterpret_cast<unsigned long>(description.c_str()), 0);
  if (id >= 0) return id;
  if (IsAbsent(errno)) return -1L;
  return KeyringError("searching the user keyring", errno);
}

}  // namespace

Status KeepInUserKeyring(const std::string& description, std::string_view secret, uint32_t timeout_sec) {
  if (timeout_sec == 0) return Status::InvalidArgument("a kept key needs a timeout of at least one second");
  // Made in this thread's own keyring, where this process alone holds it,
  // so that its permissions and timeout are set before any other process
  // can find it; then moved into the user keyring (replacing one of the
  // same description there).
  long id = ::syscall(SYS_add_key, kKeyType, description.c_str(), secret.data(), secret.size(),
                      static_cast<long>(KEY_SPEC_THREAD_KEYRING));
  if (id < 0) return KeyringError("adding a key", errno);
  auto fail = [id](const char* what) {
    const int err = errno;
    Keyctl(KEYCTL_INVALIDATE, static_cast<unsigned long>(id));
    return KeyringError(what, err);
  };
  if (Keyctl(KEYCTL_SETPERM, static_cast<unsigned long>(id), kKeptKeyPerm) < 0) return fail("setting its permissions");
  if (Keyctl(KEYCTL_SET_TIMEOUT, static_cast<unsigned long>(id), timeout_sec) < 0) return fail("setting its timeout");
  if (Keyctl(KEYCTL_LINK, static_cast<unsigned long>(id), static_cast<unsigned long>(KEY_SPEC_USER_KEYRING)) < 0)
    return fail("linking it into the user keyring");
  // The key stays whole in the user keyring if this unlink fails; the
  // thread's keyring goes with the thread anyway.
  Keyctl(KEYCTL_UNLINK, static_cast<unsigned long>(id), static_cast<unsigned long>(KEY_SPEC_THREAD_KEYRING));
  return Status::Ok();
}

Result<std::optional<std::string>> FindInUserKeyring(const std::string& description, size_t max_size) {
  STRATA_ASSIGN_OR_RETURN(long id, Search(description));
  if (id < 0) return std::optional<std::string>();
  std::string buffer(max_size + 1, '\0');
  long size = Keyctl(KEYCTL_READ, static_cast<unsigned long>(id), reinterpret_cast<unsigned long>(buffer.data()),
                     buffer.size());
  if (size < 0) {
    // It timed out or was dropped between the search and the read.
    if (IsAbsent(errno)) return std::optional<std::string>();
    return KeyringError("reading a kept key", errno);
  }
  if (static_cast<size_t>(size) > max_size) {
    Wipe(buffer);
    return std::optional<std::string>();
  }
  std::string secret = buffer.substr(0, static_cast<size_t>(size));
  Wipe(buffer);
  return std::optional<std::string>(std::move(secret));
}

Result<bool> DropFromUserKeyring(const std::string& description) {
  STRATA_ASSIGN_OR_RETURN(long id, Search(description));
  if (id < 0) return false;
  // Invalidated, not only unlinked: the kernel destroys the payload at once.
  if (Keyctl(KEYCTL_INVALIDATE, static_cast<unsigned long>(id)) == 0) return true;
  if (IsAbsent(errno)) return false;
  return KeyringError("dropping a kept key", errno);
}

}  // namespace strata::crypto
