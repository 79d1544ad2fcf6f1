#include "cli/passphrase.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "cli/kept_key.h"
#include "crypto/master_key_file.h"
#include "env/env.h"
#include "store/store.h"
#include "util/unique_fd.h"

namespace strata::cli {
namespace {

// A passphrase file is a secret of a few bytes; anything larger is not one.
constexpr uint64_t kMaxPassphraseFile = 4096;

void DropLineEnd(std::string* s) {
  if (!s->empty() && s->back() == '\n') s->pop_back();
  if (!s->empty() && s->back() == '\r') s->pop_back();
}

Result<std::string> FromFile(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(uint64_t size, Env::Default()->FileSize(path));
  if (size > kMaxPassphraseFile)
    return Status::InvalidArgument("password file " + path + " is larger than a passphrase (" +
                                   std::to_string(size) + " bytes)");
  STRATA_ASSIGN_OR_RETURN(std::string text, Env::Default()->ReadFile(path));
  DropLineEnd(&text);
  if (text.empty()) return Status::InvalidArgument("password file " + path + " holds no passphrase");
  return text;
}

// One line from the terminal with echo off; NotFound when there is no terminal.
Result<std::string> AskTerminal(int tty, const std::string& prompt) {
  // Echo goes off before the prompt appears: what is typed after it is
  // neither shown nor discarded by the mode change (TCSAFLUSH drops input
  // that is already there, so only what came before the prompt is lost).
  struct termios old_mode;
  const bool is_tty = ::tcgetattr(tty, &old_mode) == 0;
  if (is_tty) {
    struct termios quiet = old_mode;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(tty, TCSAFLUSH, &quiet);
  }
  if (::write(tty, prompt.data(), prompt.size()) < 0) {
    const int write_errno = errno;
    if (is_tty) ::tcsetattr(tty, TCSANOW, &old_mode);
    return Status::IOError("writing to the terminal", write_errno);
  }
  std::string line;
  char c;
  ssize_t n;
  while ((n = ::read(tty, &c, 1)) == 1 && c != '\n') line.push_back(c);
  const int read_errno = errno;
  if (is_tty) ::tcsetattr(tty, TCSADRAIN, &old_mode);
  (void)!::write(tty, "\n", 1);
  if (n < 0) return Status::IOError("reading the passphrase from the terminal", read_errno);
  DropLineEnd(&line);
  return line;
}

Result<std::string> FromTerminal(const PassphraseSource& source) {
  UniqueFd tty(::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!tty.valid()) return Status::NotFound("no terminal");
  STRATA_ASSIGN_OR_RETURN(std::string first, AskTerminal(tty.get(), source.prompt));
  if (first.empty()) return Status::InvalidArgument("an empty passphrase was given; nothing was changed");
  if (source.confirm) {
    STRATA_ASSIGN_OR_RETURN(std::string again, AskTerminal(tty.get(), "the same again: "));
    if (again != first) return Status::InvalidArgument("the two passphrases differ; nothing was changed");
  }
  return first;
}

}  // namespace

Result<std::string> ReadPassphrase(const PassphraseSource& source, const std::string& what) {
  if (!source.file.empty()) return FromFile(source.file);
  if (const char* value = std::getenv(source.env_var); value != nullptr && *value != '\0') return std::string(value);
  auto typed = FromTerminal(source);
  if (typed.status().IsNotFound())
    return Status::InvalidArgument(what + ": give it in " + source.env_var + ", in a file with " + source.option +
                                   ", or on a terminal (there is none here)");
  return typed;
}

Result<crypto::Key256> ReadMasterKeyFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status::IOError("cannot read the key file " + path, errno);
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("the key file " + path + " is not a regular file");
  if ((st.st_mode & 077) != 0)
    return Status::InvalidArgument(fmt::format(
        "the key file {} can be read or changed by others than its owner (mode {:04o}); it holds the store's "
        "key, so it is not used: make it private with 'chmod 600 {}'",
        path, st.st_mode & 07777, path));
  if (static_cast<uint64_t>(st.st_size) > kMaxPassphraseFile)
    return Status::InvalidArgument("the key file " + path + " is larger than a key file (" +
                                   std::to_string(st.st_size) + " bytes)");
  STRATA_ASSIGN_OR_RETURN(std::string bytes, Env::Default()->ReadFile(path));
  auto key = crypto::DecodeMasterKeyFile(bytes, "the key file " + path);
  crypto::Wipe(bytes);
  return key;
}

namespace {
Result<crypto::Key256> KeyFromPassphrase(const std::string& canonical, const PassphraseSource& source) {
  STRATA_ASSIGN_OR_RETURN(std::string passphrase,
                          ReadPassphrase(source, "the store at " + canonical +
                                                     " is encrypted and needs its passphrase (or a master key "
                                                     "file: --key-file or STRATA_KEY_FILE)"));
  auto master = Store::Unlock(canonical, passphrase);
  crypto::Wipe(passphrase);
  return master;
}

Result<crypto::Key256> KeyFromFile(const std::string& canonical, const std::string& key_file) {
  STRATA_ASSIGN_OR_RETURN(crypto::Key256 master, ReadMasterKeyFile(key_file));
  STRATA_RETURN_IF_ERROR(Store::CheckKey(canonical, master));
  return master;
}
}  // namespace

Result<crypto::Key256> UnlockStoreKey(const std::string& path, const PassphraseSource& source,
                                      const std::string& key_file, KeptKey kept) {
  static std::mutex mu;
  static std::map<std::string, crypto::Key256> unlocked;  // by canonical path
  char* real = ::realpath(path.c_str(), nullptr);
  const std::string canonical = real != nullptr ? std::string(real) : path;
  std::free(real);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = unlocked.find(canonical); it != unlocked.end() && kept == KeptKey::kUse) return it->second;
  }
  std::optional<crypto::Key256> kept_key;
  if (kept == KeptKey::kUse) {
    if (auto config = Store::ReadConfig(canonical); config.ok()) kept_key = KeptStoreKey(canonical, *config);
  }
  auto master = kept_key           ? Result<crypto::Key256>(*kept_key)
                : key_file.empty() ? KeyFromPassphrase(canonical, source)
                                   : KeyFromFile(canonical, key_file);
  if (!master.ok()) return master.status();
  std::lock_guard<std::mutex> lock(mu);
  unlocked.emplace(canonical, *master);
  return master;
}

}  // namespace strata::cli
