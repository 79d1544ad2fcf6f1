// LogGraph: the ASCII drawing of `strata log --graph` (history.h).
#include <algorithm>

#include "cli/history.h"

namespace strata::cli {

std::string Subject(const std::string& message) { return message.substr(0, message.find('\n')); }

LogGraph::Row LogGraph::Add(const Hash& id, const std::vector<Hash>& parents) {
  Row row;
  auto it = std::find(columns_.begin(), columns_.end(), id);
  if (it == columns_.end()) {  // a new line of history, in a new column on the right
    const size_t at = 2 * columns_.size();
    if (at < last_row_.size() && last_row_[at] != ' ') {
      std::string gap;
      for (size_t i = 0; i < columns_.size(); i++) gap += "| ";
      gap.erase(gap.find_last_not_of(' ') + 1);
      row.before.push_back(std::move(gap));
    }
    it = columns_.insert(columns_.end(), id);
  }
  const size_t here = static_cast<size_t>(it - columns_.begin());
  for (size_t i = 0; i < columns_.size(); i++) row.prefix += i == here ? "* " : "| ";

  // Where each line goes next: every column keeps waiting for its commit, the
  // commit's column forks into its parents; two lines waiting for the same
  // commit end in the same (leftmost) column.
  struct Lane {
    size_t from, to;
  };
  std::vector<Hash> next;
  std::vector<Lane> lanes;
  auto place = [&](const Hash& h, size_t from) {
    auto found = std::find(next.begin(), next.end(), h);
    if (found == next.end()) found = next.insert(next.end(), h);
    lanes.push_back({from, static_cast<size_t>(found - next.begin())});
  };
  for (size_t i = 0; i < columns_.size(); i++) {
    if (i != here) {
      place(columns_[i], i);
    } else {
      for (const Hash& p : parents) place(p, i);
    }
  }
  const size_t width = std::max(columns_.size(), next.size());
  columns_ = std::move(next);

  // Lines that change column move one column per row.
  auto moving = [&] { return std::any_of(lanes.begin(), lanes.end(), [](const Lane& l) { return l.from != l.to; }); };
  while (moving()) {
    std::string line(2 * width + 1, ' ');
    for (Lane& l : lanes) {
      if (l.from == l.to) {
        line[2 * l.from] = '|';
      } else if (l.to < l.from) {
        line[2 * l.from - 1] = '/';
        l.from--;
      } else {
        line[2 * l.from + 1] = '\\';
        l.from++;
      }
    }
    line.erase(line.find_last_not_of(' ') + 1);
    row.after.push_back(std::move(line));
  }
  last_row_ = row.after.empty() ? row.prefix : row.after.back();
  return row;
}

}  // namespace strata::cli
