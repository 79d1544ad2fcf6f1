#include "remote/s3_xml.h"

#include <charconv>

#include "remote/s3_request.h"
#include "store/pack_format.h"
#include "store/store.h"

namespace strata::s3 {
namespace {

struct Element {
  std::string_view content;
  size_t end = 0;  // just past the closing tag
};

// The first element `name` at or after `from`: "<name>...</name>",
// "<name attr=...>...</name>" or "<name/>". Elements of other names that
// merely start with `name` ("<KeyCount>" for "Key") do not match.
std::optional<Element> FindElement(std::string_view xml, std::string_view name, size_t from = 0) {
  std::string open = "<" + std::string(name);
  for (size_t pos = xml.find(open, from); pos != std::string_view::npos; pos = xml.find(open, pos + 1)) {
    size_t after = pos + open.size();
    if (after >= xml.size()) return std::nullopt;
    char c = xml[after];
    if (c != '>' && c != ' ' && c != '/' && c != '\t' && c != '\n' && c != '\r') continue;
    size_t gt = xml.find('>', after);
    if (gt == std::string_view::npos) return std::nullopt;
    if (xml[gt - 1] == '/') return Element{std::string_view(), gt + 1};
    std::string close = "</" + std::string(name) + ">";
    size_t end = xml.find(close, gt + 1);
    if (end == std::string_view::npos) return std::nullopt;
    return Element{xml.substr(gt + 1, end - gt - 1), end + close.size()};
  }
  return std::nullopt;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes the five named entities and numeric character references; an
// ampersand that starts none of them is kept as is.
std::string DecodeEntities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out.push_back('&');
      continue;
    }
    std::string_view entity = s.substr(i + 1, semi - i - 1);
    if (entity == "amp") {
      out.push_back('&');
    } else if (entity == "lt") {
      out.push_back('<');
    } else if (entity == "gt") {
      out.push_back('>');
    } else if (entity == "quot") {
      out.push_back('"');
    } else if (entity == "apos") {
      out.push_back('\'');
    } else if (entity.size() > 1 && entity[0] == '#') {
      bool hex = entity[1] == 'x' || entity[1] == 'X';
      std::string_view digits = entity.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty() || cp > 0x10FFFF) {
        out.push_back('&');
        continue;
      }
      AppendUtf8(out, cp);
    } else {
      out.push_back('&');
      continue;
    }
    i = semi;
  }
  return out;
}

}  // namespace

std::optional<std::string> ElementText(std::string_view xml, std::string_view name) {
  auto element = FindElement(xml, name);
  if (!element) return std::nullopt;
  return DecodeEntities(element->content);
}

std::optional<int64_t> ParseIsoTime(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS, then optional fractional seconds, then Z.
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text.back() != 'Z')
    return std::nullopt;
  auto number = [&](size_t at, size_t len) -> std::optional<int> {
    int v = 0;
    auto [ptr, ec] = std::from_chars(text.data() + at, text.data() + at + len, v);
    if (ec != std::errc() || ptr != text.data() + at + len || text[at] == '-' || text[at] == '+') return std::nullopt;
    return v;
  };
  auto year = number(0, 4), month = number(5, 2), day = number(8, 2);
  auto hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty() && (rest[0] != '.' || rest.size() == 1 ||
                        rest.substr(1).find_first_not_of("0123456789") != std::string_view::npos))
    return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60)
    return std::nullopt;
  // Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days
  // arithmetic, with March as the first month so leap days come last).
  const int y = *year - (*month <= 2 ? 1 : 0);
  const int era = y / 400;
  const int yoe = y - era * 400;
  const int mp = (*month + 9) % 12;
  const int doy = (153 * mp + 2) / 5 + *day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = static_cast<int64_t>(era) * 146097 + doe - 719468;
  return days * 86400 + *hour * 3600 + *minute * 60 + *second;
}

std::optional<ListPage> ParseListPage(std::string_view xml) {
  auto result = FindElement(xml, "ListBucketResult");
  if (!result) return std::nullopt;
  std::string_view body = result->content;
  ListPage page;
  for (auto contents = FindElement(body, "Contents"); contents;
       contents = FindElement(body, "Contents", contents->end)) {
    ListedObject object;
    auto key = ElementText(contents->content, "Key");
    auto size = ElementText(contents->content, "Size");
    if (!key || !size) return std::nullopt;
    object.key = std::move(*key);
    auto [ptr, ec] = std::from_chars(size->data(), size->data() + size->size(), object.size);
    if (ec != std::errc() || ptr != size->data() + size->size()) return std::nullopt;
    if (auto etag = ElementText(contents->content, "ETag")) object.etag = StripQuotes(*etag);
    if (auto when = ElementText(contents->content, "LastModified")) object.last_modified = ParseIsoTime(*when).value_or(0);
    page.objects.push_back(std::move(object));
  }
  // Top-level elements; no child of <Contents> has these names.
  auto truncated = ElementText(body, "IsTruncated");
  page.truncated = truncated && *truncated == "true";
  if (auto token = ElementText(body, "NextContinuationToken")) page.next_token = std::move(*token);
  return page;
}

std::optional<std::string> EncodeDeleteRequest(const std::vector<std::string>& keys) {
  if (keys.empty()) return std::nullopt;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>false</Quiet>";
  for (const std::string& key : keys) {
    xml += "<Object><Key>";
    for (char c : key) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 && c != '\t' && c != '\n' && c != '\r') return std::nullopt;
      switch (c) {
        case '&': xml += "&amp;"; break;
        case '<': xml += "&lt;"; break;
        case '>': xml += "&gt;"; break;
        case '"': xml += "&quot;"; break;
        case '\'': xml += "&apos;"; break;
        // Kept as references: an XML reader turns a literal CR (or CR LF)
        // into LF, which would name another key.
        case '\r': xml += "&#13;"; break;
        case '\n': xml += "&#10;"; break;
        case '\t': xml += "&#9;"; break;
        default: xml.push_back(c);
      }
    }
    xml += "</Key></Object>";
  }
  xml += "</Delete>";
  return xml;
}

std::optional<DeleteResult> ParseDeleteResult(std::string_view xml) {
  auto root = FindElement(xml, "DeleteResult");
  if (!root) return std::nullopt;
  std::string_view body = root->content;
  DeleteResult result;
  for (auto e = FindElement(body, "Deleted"); e; e = FindElement(body, "Deleted", e->end)) {
    auto key = ElementText(e->content, "Key");
    if (!key) return std::nullopt;
    result.deleted.push_back(std::move(*key));
  }
  for (auto e = FindElement(body, "Error"); e; e = FindElement(body, "Error", e->end)) {
    auto key = ElementText(e->content, "Key");
    if (!key) return std::nullopt;
    result.failed.push_back(DeleteFailure{std::move(*key), ElementText(e->content, "Code").value_or(""),
                                          ElementText(e->content, "Message").value_or("")});
  }
  return result;
}

ErrorDocument ParseError(std::string_view xml) {
  ErrorDocument error;
  auto root = FindElement(xml, "Error");
  if (!root) return error;
  error.code = ElementText(root->content, "Code").value_or("");
  error.message = ElementText(root->content, "Message").value_or("");
  return error;
}

std::optional<std::string> PackNameFromKey(std::string_view key) {
  const std::string_view folder = kPacksFolder;
  if (!key.starts_with(folder)) return std::nullopt;
  std::string_view name = key.substr(folder.size());
  auto id = PackNameToHash(name);
  // Upper-case hex would name the same pack twice: strata writes lower case only.
  if (!id || id->ToHex() + kPackSuffix != name) return std::nullopt;
  return std::string(name);
}

namespace {
// An encrypted store's branch name as kept: lowercase hex of its seal
// (nonce, name, tag), longer than a plain name may be for long names.
bool IsSealedRefHex(std::string_view name) {
  constexpr size_t kMaxSealedHex = 2 * (12 + 200 + 16);
  if (name.empty() || name.size() % 2 != 0 || name.size() > kMaxSealedHex) return false;
  for (char c : name)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}
}  // namespace

std::optional<std::string> RefNameFromKey(std::string_view key) {
  const std::string_view folder = kRefsFolder;
  if (!key.starts_with(folder)) return std::nullopt;
  std::string_view name = key.substr(folder.size());
  if (!IsValidRefName(name) && !IsSealedRefHex(name)) return std::nullopt;
  return std::string(name);
}

}  // namespace strata::s3
