#include "cli/mount_source.h"

namespace strata::cli {
namespace {
constexpr std::string_view kPrefix = "strata";
bool IsOctal(char c) { return c >= '0' && c <= '7'; }
}  // namespace

std::string FormatMountSource(const MountSource& source) {
  std::string out(kPrefix);
  if (!source.remote.empty()) out += "+" + source.remote;
  out += ":" + source.workspace;
  if (!source.store.empty()) out += ":" + source.store;
  return out;
}

std::optional<MountSource> ParseMountSource(std::string_view text) {
  if (!text.starts_with(kPrefix)) return std::nullopt;
  text.remove_prefix(kPrefix.size());
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  MountSource out;
  if (colon > 0) {
    if (text[0] != '+' || colon == 1) return std::nullopt;
    out.remote = std::string(text.substr(1, colon - 1));
  }
  text.remove_prefix(colon + 1);
  const size_t next = text.find(':');
  out.workspace = std::string(text.substr(0, next));
  if (out.workspace.empty()) return std::nullopt;
  if (next != std::string_view::npos) {
    out.store = std::string(text.substr(next + 1));
    if (!out.store.starts_with('/')) return std::nullopt;
  }
  return out;
}

std::string UnescapeMountField(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); i++) {
    if (field[i] == '\\' && i + 3 < field.size() && IsOctal(field[i + 1]) && IsOctal(field[i + 2]) &&
        IsOctal(field[i + 3])) {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

}  // namespace strata::cli
