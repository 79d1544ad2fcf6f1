// Reading a small file whole: kernel interface files (/proc, /sys/fs/cgroup)
// and short records, where an unreadable file means the same as an empty one.
// Thread-safety: a pure function.
#pragma once

#include <string>

namespace strata {

// The bytes of the file at path; empty when it is missing or unreadable.
// Follows links: not for files an attacker may plant (use env/ for those).
std::string ReadSmallFile(const std::string& path);

}  // namespace strata
