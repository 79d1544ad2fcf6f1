// SequentialDetector: tells sequential reads of a file from random ones, to
// decide what to read ahead.
//
// The kernel gives the daemon no stable notion of "a reader": its own
// read-ahead sends the pages of one open file as requests that several daemon
// threads serve out of order, and several open files of one inode share the
// inode's page cache. So a *stream* is tracked per inode by the range its
// reads span: a read that starts within `slack` of a stream's end continues
// it (reordered requests land just behind or ahead of it), any other read
// starts a new stream. A stream is sequential once `trigger` reads moved its
// end forward and its reads cover at least half the range they span; then the
// detector answers with the range to prefetch: from the end of the read on, a
// window that doubles with every further sequential read up to `max_window`.
// Random reads of a large file may land near a stream's end by chance, but
// they leave most of the range they span unread, so they prefetch nothing.
//
// Streams are few (a table of `max_streams`, least recently used replaced),
// so several readers of one file are followed separately.
//
// Thread-safety: OnRead may be called concurrently.
#pragma once

#include <cstdint>
#include <vector>

#include "util/mutex.h"

namespace strata::workspace_internal {

class SequentialDetector {
 public:
  struct Params {
    uint64_t slack = 8ull << 20;  // how far a read may start from a stream's end and still continue it
    unsigned trigger = 3;         // reads moving a stream forward before it counts as sequential
    uint64_t min_window = 2ull << 20;
    uint64_t max_window = 16ull << 20;
    size_t max_streams = 32;
  };
  struct Range {
    uint64_t start = 0, end = 0;
    bool empty() const { return end <= start; }
  };

  SequentialDetector() : SequentialDetector(Params{}) {}
  explicit SequentialDetector(Params params) : params_(params) {}

  // Records a read of [offset, offset + length) of file `key`; returns the
  // range to read ahead, empty when the read is not part of a sequential stream.
  Range OnRead(uint64_t key, uint64_t offset, uint64_t length);

 private:
  struct Stream {
    uint64_t key = 0;
    uint64_t start = 0, end = 0;  // the range its reads span
    uint64_t bytes = 0;           // bytes its reads asked for
    unsigned run = 0;             // reads that moved its end forward
    uint64_t last_use = 0;
  };

  const Params params_;
  Mutex mu_;
  std::vector<Stream> streams_ GUARDED_BY(mu_);
  uint64_t clock_ GUARDED_BY(mu_) = 0;
};

}  // namespace strata::workspace_internal
