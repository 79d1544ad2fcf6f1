// folio_orders — how a file's pages in the page cache are grouped into folios.
//
//   folio_orders [--json] FILE...
//
// For each FILE it prints the number of pages of the file, how many of them are
// in the page cache now, and a histogram of the orders of the folios holding
// them (order k = a folio of 2^k pages): per order, the number of folios, the
// resident pages they hold and their share of the file's resident bytes. With
// --json it prints one JSON object per file and line instead, for scripts:
//
//   {"file", "page_size", "size_bytes", "pages", "resident_pages",
//    "mapped_pages", "folios", "orders": {"<k>": {"folios", "pages", "share"}},
//    "folios_past_end", "folios_head_unmapped", "unmapped_resident_pages"}
//
// Why: the kernel reads a file ahead into large folios on some filesystems
// (ext4) and only into single pages on others (FUSE without large-folio
// support); copying from a 2 MiB folio is much cheaper than from 512 pages, so
// this is the first thing to look at when a warm read is slower than native.
//
// How (Linux only, needs root: /proc/kpageflags, and PFNs in pagemap, are
// CAP_SYS_ADMIN only):
//   1. The file is mapped read-only and shared; mincore() on the mapping tells
//      which pages are in the page cache (for a file mapping it looks the page
//      cache up, also for pages this process never touched, when the caller
//      owns the file or may write it, which root may).
//   2. Exactly those pages are touched (one byte read each) so that they get a
//      page table entry. A page that is not resident is never touched, so the
//      tool reads nothing in. madvise(MADV_RANDOM) first: a fault on a cached
//      page that carries the readahead mark would otherwise start asynchronous
//      readahead of the next pages. Touching does mark the pages accessed (LRU
//      aging), which does not change what is cached.
//   3. /proc/self/pagemap gives the physical frame (PFN) of each touched page;
//      /proc/kpageflags gives its flags: neither COMPOUND_HEAD (bit 15) nor
//      COMPOUND_TAIL (bit 16) means an order-0 folio; a head is followed in
//      physical memory by its tail pages, and their count gives the order.
//
// Opening the file is the one thing that may change the cache: a FUSE server
// that answers OPEN without FOPEN_KEEP_CACHE makes the kernel drop the file's
// cache (libfuse's passthrough_ll with cache=auto does). Any reader opening the
// file sees the same, so the tool reports what such a reader would find.
//
// Edge cases, handled as follows:
//   - A folio that runs past the end of the mapping (the last folio of a file
//     whose size is not a multiple of the folio size): its order is its real
//     one, found from the tail pages in physical memory; only its pages inside
//     the file count as resident pages. Counted in "folios_past_end".
//   - A resident page whose folio head is not mapped here (the head was
//     evicted, or the folio split, between the steps above; a folio cannot
//     start before offset 0): the head is searched backwards in physical
//     memory and the folio counted with its real order. Counted in
//     "folios_head_unmapped"; normally 0.
//   - A page that mincore() reported but that has no PFN after the touch
//     (evicted meanwhile) is counted in "unmapped_resident_pages" and in no
//     folio; so the orders' pages add up to mapped_pages, which equals
//     resident_pages unless the cache changed while the tool ran.
//
// Exit status: 0; 1 when any file failed (the others are still reported) or
// the tool cannot read page flags; 2 for a usage error.
//
// Only libc and the C++ standard library are used.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/unique_fd.h"

namespace {

// /proc/self/pagemap: one 64-bit entry per virtual page.
constexpr uint64_t kPagemapPresent = 1ULL << 63;
constexpr uint64_t kPagemapPfnMask = (1ULL << 55) - 1;  // bits 0-54
// /proc/kpageflags: one 64-bit entry per physical page (include/uapi/linux/kernel-page-flags.h).
constexpr uint64_t kKpfCompoundHead = 1ULL << 15;
constexpr uint64_t kKpfCompoundTail = 1ULL << 16;
constexpr uint64_t kKpfNopage = 1ULL << 20;
// The largest folio searched for, in pages: beyond any page-cache folio order
// (PMD order 9 on x86-64 with 4 KiB pages; 13 on arm64 with 64 KiB pages).
constexpr uint64_t kMaxFolioPages = 1ULL << 13;
// Pages handled per pagemap read: 2 MiB of entries bounds memory for big files.
constexpr size_t kPagemapBatch = 1 << 18;

// An error with a message; the tool reports it and goes on with the next file.
struct Error {
  std::string message;
};

std::string ErrnoText(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// A read-only shared mapping of a whole file, unmapped when it goes out of scope.
class Mapping {
 public:
  Mapping(void* addr, size_t len) : addr_(addr), len_(len) {}
  ~Mapping() {
    if (addr_ != MAP_FAILED) munmap(addr_, len_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  bool ok() const { return addr_ != MAP_FAILED; }
  void* addr() const { return addr_; }
  const volatile unsigned char* bytes() const { return static_cast<const volatile unsigned char*>(addr_); }

 private:
  void* addr_;
  size_t len_;
};

// Reads COUNT 64-bit entries from a /proc table starting at entry INDEX; fewer
// when the table ends (kpageflags stops at the last PFN).
size_t ReadEntries(int fd, const char* name, uint64_t index, uint64_t* out, size_t count) {
  size_t done = 0;
  while (done < count) {
    ssize_t n = pread(fd, reinterpret_cast<char*>(out + done), (count - done) * sizeof(uint64_t),
                      static_cast<off_t>((index + done) * sizeof(uint64_t)));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error{ErrnoText(std::string("reading ") + name, errno)};
    }
    if (n == 0) break;
    done += static_cast<size_t>(n) / sizeof(uint64_t);
    if (n % sizeof(uint64_t) != 0) throw Error{std::string("short read of an entry of ") + name};
  }
  return done;
}

uint64_t Flags(int kpageflags, uint64_t pfn) {
  uint64_t f = 0;
  if (ReadEntries(kpageflags, "/proc/kpageflags", pfn, &f, 1) != 1) return kKpfNopage;
  return f;
}

// A folio in physical memory: its head PFN and its number of pages.
struct Folio {
  uint64_t head = 0;
  uint64_t pages = 1;
};

// The folio holding physical page PFN, from the compound flags around it.
// HEAD_UNMAPPED is set when PFN is a tail page (its head was not the page
// looked at, i.e. not mapped at the position before it).
Folio FolioOf(int kpageflags, uint64_t pfn, bool* head_unmapped) {
  Folio folio{pfn, 1};
  uint64_t flags = Flags(kpageflags, pfn);
  *head_unmapped = false;
  if (flags & kKpfCompoundTail) {
    // Search the head backwards; a folio is naturally aligned in physical
    // memory, so it lies within the last kMaxFolioPages frames.
    *head_unmapped = true;
    uint64_t lowest = pfn >= kMaxFolioPages ? pfn - kMaxFolioPages : 0;
    uint64_t p = pfn;
    while (p > lowest) {
      --p;
      uint64_t f = Flags(kpageflags, p);
      if (f & kKpfCompoundHead) {
        folio.head = p;
        flags = f;
        break;
      }
      if (!(f & kKpfCompoundTail)) throw Error{"a compound tail page without a head (the folio changed meanwhile?)"};
    }
    if (!(flags & kKpfCompoundHead)) throw Error{"no compound head found before a tail page"};
  }
  if (!(flags & kKpfCompoundHead)) return folio;  // order 0
  // Count the tail pages following the head, a batch of flags at a time.
  std::vector<uint64_t> batch(512);
  uint64_t next = folio.head + 1;
  while (folio.pages < kMaxFolioPages) {
    size_t got = ReadEntries(kpageflags, "/proc/kpageflags", next, batch.data(), batch.size());
    size_t i = 0;
    while (i < got && (batch[i] & kKpfCompoundTail) && !(batch[i] & kKpfCompoundHead)) ++i;
    folio.pages += i;
    next += i;
    if (i < batch.size()) break;
  }
  return folio;
}

int OrderOf(uint64_t pages) {
  int order = 0;
  while ((1ULL << order) < pages) ++order;
  return order;
}

struct OrderCount {
  uint64_t folios = 0;
  uint64_t pages = 0;  // resident pages of the file in folios of this order
};

struct Report {
  std::string file;
  uint64_t page_size = 0;
  uint64_t size_bytes = 0;
  uint64_t pages = 0;
  uint64_t resident_pages = 0;
  uint64_t mapped_pages = 0;
  uint64_t folios = 0;
  uint64_t folios_past_end = 0;
  uint64_t folios_head_unmapped = 0;
  uint64_t unmapped_resident_pages = 0;
  std::map<int, OrderCount> orders;
};

Report Inspect(const std::string& path, int pagemap, int kpageflags) {
  Report r;
  r.file = path;
  r.page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  strata::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw Error{ErrnoText(path, errno)};
  struct stat st;
  if (fstat(fd.get(), &st) != 0) throw Error{ErrnoText(path + ": fstat", errno)};
  if (!S_ISREG(st.st_mode)) throw Error{path + ": not a regular file"};
  r.size_bytes = static_cast<uint64_t>(st.st_size);
  r.pages = (r.size_bytes + r.page_size - 1) / r.page_size;
  if (r.pages == 0) return r;

  const size_t len = static_cast<size_t>(r.pages * r.page_size);
  Mapping map(mmap(nullptr, len, PROT_READ, MAP_SHARED, fd.get(), 0), len);
  if (!map.ok()) throw Error{ErrnoText(path + ": mmap", errno)};
  if (madvise(map.addr(), len, MADV_RANDOM) != 0) {
    throw Error{ErrnoText(path + ": madvise(MADV_RANDOM)", errno)};
  }
  std::vector<unsigned char> incore(r.pages);
  if (mincore(map.addr(), len, incore.data()) != 0) {
    throw Error{ErrnoText(path + ": mincore", errno)};
  }
  for (uint64_t i = 0; i < r.pages; ++i) {
    if (incore[i] & 1) {
      ++r.resident_pages;
      (void)map.bytes()[i * r.page_size];  // fault in the cached page; nothing is read from disk
    }
  }

  const uint64_t base = reinterpret_cast<uintptr_t>(map.addr()) / r.page_size;
  std::vector<uint64_t> entries;
  // The folio the previous page belonged to, and the file page its head maps to
  // (head_index may be "negative" for a folio whose head was not mapped).
  bool in_folio = false;
  Folio current;
  int64_t head_index = 0;
  for (uint64_t start = 0; start < r.pages; start += kPagemapBatch) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kPagemapBatch, r.pages - start));
    entries.resize(n);
    if (ReadEntries(pagemap, "/proc/self/pagemap", base + start, entries.data(), n) != n) {
      throw Error{path + ": short read of /proc/self/pagemap"};
    }
    for (size_t k = 0; k < n; ++k) {
      const uint64_t i = start + k;
      if (!(incore[i] & 1)) continue;
      if (!(entries[k] & kPagemapPresent)) {
        ++r.unmapped_resident_pages;
        continue;
      }
      const uint64_t pfn = entries[k] & kPagemapPfnMask;
      if (pfn == 0) throw Error{"/proc/self/pagemap shows no frame numbers: needs CAP_SYS_ADMIN (run as root)"};
      ++r.mapped_pages;
      // Still inside the previous page's folio, at the matching position?
      if (in_folio && pfn >= current.head && pfn < current.head + current.pages &&
          static_cast<int64_t>(pfn - current.head) == static_cast<int64_t>(i) - head_index) {
        ++r.orders[OrderOf(current.pages)].pages;
        continue;
      }
      bool head_unmapped = false;
      current = FolioOf(kpageflags, pfn, &head_unmapped);
      in_folio = true;
      head_index = static_cast<int64_t>(i) - static_cast<int64_t>(pfn - current.head);
      OrderCount& c = r.orders[OrderOf(current.pages)];
      ++c.folios;
      ++c.pages;
      ++r.folios;
      if (head_unmapped) ++r.folios_head_unmapped;
      if (head_index + static_cast<int64_t>(current.pages) > static_cast<int64_t>(r.pages)) ++r.folios_past_end;
    }
  }
  return r;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);  // UTF-8 passes through; other bytes too (names are bytes)
    }
  }
  return out + "\"";
}

double Share(uint64_t pages, uint64_t total) { return total ? static_cast<double>(pages) / total : 0.0; }

void PrintJson(const Report& r) {
  std::printf(
      "{\"file\": %s, \"page_size\": %" PRIu64 ", \"size_bytes\": %" PRIu64 ", \"pages\": %" PRIu64
      ", \"resident_pages\": %" PRIu64 ", \"mapped_pages\": %" PRIu64 ", \"folios\": %" PRIu64 ", \"orders\": {",
      JsonString(r.file).c_str(), r.page_size, r.size_bytes, r.pages, r.resident_pages, r.mapped_pages, r.folios);
  const char* sep = "";
  for (const auto& [order, c] : r.orders) {
    std::printf("%s\"%d\": {\"folios\": %" PRIu64 ", \"pages\": %" PRIu64 ", \"share\": %.6f}", sep, order, c.folios,
                c.pages, Share(c.pages, r.resident_pages));
    sep = ", ";
  }
  std::printf("}, \"folios_past_end\": %" PRIu64 ", \"folios_head_unmapped\": %" PRIu64
              ", \"unmapped_resident_pages\": %" PRIu64 "}\n",
              r.folios_past_end, r.folios_head_unmapped, r.unmapped_resident_pages);
}

void PrintText(const Report& r) {
  std::printf("%s: %" PRIu64 " pages of %" PRIu64 " B, %" PRIu64 " resident (%.1f %%) in %" PRIu64 " folios\n",
              r.file.c_str(), r.pages, r.page_size, r.resident_pages, 100.0 * Share(r.resident_pages, r.pages),
              r.folios);
  if (!r.orders.empty()) {
    std::printf("  %5s  %10s  %14s  %s\n", "order", "folios", "resident pages", "share of resident bytes");
    for (const auto& [order, c] : r.orders) {
      std::printf("  %5d  %10" PRIu64 "  %14" PRIu64 "  %5.1f %%\n", order, c.folios, c.pages,
                  100.0 * Share(c.pages, r.resident_pages));
    }
  }
  if (r.folios_past_end) std::printf("  folios running past the end of the file: %" PRIu64 "\n", r.folios_past_end);
  if (r.folios_head_unmapped) {
    std::printf("  folios whose head page was not mapped (cache changed meanwhile): %" PRIu64 "\n",
                r.folios_head_unmapped);
  }
  if (r.unmapped_resident_pages) {
    std::printf("  resident pages gone before they were looked at (evicted meanwhile): %" PRIu64 "\n",
                r.unmapped_resident_pages);
  }
}

void Usage(FILE* to) {
  std::fprintf(to,
               "Usage: folio_orders [--json] FILE...\n"
               "Prints how each FILE's pages in the page cache are grouped into folios: pages,\n"
               "resident pages, and per folio order the folios, their resident pages and share\n"
               "of resident bytes. Reads nothing into the cache. Needs root (/proc/kpageflags).\n"
               "  --json   one JSON object per file and line\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::vector<std::string> files;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (!options_done && a == "--json") {
      json = true;
    } else if (!options_done && (a == "-h" || a == "--help")) {
      Usage(stdout);
      return 0;
    } else if (!options_done && a == "--") {
      options_done = true;
    } else if (!options_done && a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "folio_orders: unknown option %s\n", argv[i]);
      Usage(stderr);
      return 2;
    } else {
      files.emplace_back(a);
    }
  }
  if (files.empty()) {
    Usage(stderr);
    return 2;
  }

  strata::UniqueFd kpageflags(open("/proc/kpageflags", O_RDONLY | O_CLOEXEC));
  if (kpageflags.get() < 0) {
    int err = errno;
    std::fprintf(stderr, "folio_orders: cannot open /proc/kpageflags: %s%s\n", std::strerror(err),
                 err == EACCES || err == EPERM ? " (it needs root: run as root)" : "");
    return 1;
  }
  uint64_t probe = 0;
  if (pread(kpageflags.get(), &probe, sizeof probe, 0) < 0) {
    int err = errno;
    std::fprintf(stderr, "folio_orders: cannot read /proc/kpageflags: %s%s\n", std::strerror(err),
                 err == EPERM ? " (it needs CAP_SYS_ADMIN: run as root)" : "");
    return 1;
  }
  strata::UniqueFd pagemap(open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
  if (pagemap.get() < 0) {
    std::fprintf(stderr, "folio_orders: cannot open /proc/self/pagemap: %s\n", std::strerror(errno));
    return 1;
  }

  int status = 0;
  for (const std::string& f : files) {
    try {
      Report r = Inspect(f, pagemap.get(), kpageflags.get());
      if (json) {
        PrintJson(r);
      } else {
        PrintText(r);
      }
      std::fflush(stdout);
    } catch (const Error& e) {
      std::fprintf(stderr, "folio_orders: %s\n", e.message.c_str());
      status = 1;
    }
  }
  return status;
}
