// The parts of the S3 client that need no server: reading XML answers,
// percent-encoding, locations and credentials.
#include "remote/s3_xml.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include "remote/s3_client.h"
#include "remote/s3_request.h"
#include "testing/store_test_util.h"

namespace strata {
namespace {

TEST(S3Xml, ListPage) {
  const char* xml =
      R"(<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      R"(<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>)"
      R"(<Contents><Key>p/a&amp;b &lt;c&gt; &#xFC;&#252;</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>)"
      R"(<ETag>&quot;0123abcd&quot;</ETag><Size>17</Size><StorageClass>STANDARD</StorageClass></Contents>)"
      R"(<Contents><Key>p/z</Key><ETag>"ff"</ETag><Size>0</Size><Owner><ID>x</ID></Owner></Contents>)"
      R"(<NextContinuationToken>tok/+=</NextContinuationToken></ListBucketResult>)";
  auto page = s3::ParseListPage(xml);
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "p/a&b <c> \xc3\xbc\xc3\xbc");
  EXPECT_EQ(page->objects[0].size, 17u);
  EXPECT_EQ(page->objects[0].etag, "0123abcd");
  EXPECT_EQ(page->objects[1].key, "p/z");
  EXPECT_EQ(page->objects[1].etag, "ff");
  EXPECT_EQ(page->objects[0].last_modified, 1767225600);  // 2026-01-01T00:00:00Z
  EXPECT_EQ(page->objects[1].last_modified, 0);           // not listed
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "tok/+=");
}

TEST(S3Xml, IsoTimes) {
  EXPECT_EQ(s3::ParseIsoTime("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(s3::ParseIsoTime("1970-01-01T00:00:01.999Z"), 1);
  EXPECT_EQ(s3::ParseIsoTime("2000-03-01T00:00:00.000Z"), 951868800);  // after a leap day of a century year
  EXPECT_EQ(s3::ParseIsoTime("2024-02-29T23:59:59.5Z"), 1709251199);
  EXPECT_EQ(s3::ParseIsoTime("2026-12-02T01:02:03.000Z"), 1796173323);
  for (const char* bad : {"", "2026-12-02", "2026-12-02T01:02:03", "2026-13-02T01:02:03Z", "2026-12-02T24:00:00Z",
                          "2026-12-02T01:02:03.Z", "2026-12-02T01:02:03.x1Z", "+026-12-02T01:02:03Z",
                          "2026-12-02 01:02:03Z", "2026-12-00T01:02:03Z"})
    EXPECT_EQ(s3::ParseIsoTime(bad), std::nullopt) << bad;
}

TEST(S3Xml, EmptyAndBadPages) {
  auto empty = s3::ParseListPage("<ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated></ListBucketResult>");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->objects.empty());
  EXPECT_FALSE(empty->truncated);
  EXPECT_FALSE(s3::ParseListPage("<Error><Code>AccessDenied</Code></Error>").has_value());
  EXPECT_FALSE(s3::ParseListPage("<ListBucketResult><Contents><Key>k</Key><Size>x1</Size></Contents></ListBucketResult>"));
  EXPECT_FALSE(s3::ParseListPage("<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>"));
  EXPECT_FALSE(s3::ParseListPage("<ListBucketResult><Contents><Key>k"));
}

TEST(S3Xml, ErrorDocument) {
  auto e = s3::ParseError(R"(<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>a &amp; b</Message></Error>)");
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "a & b");
  EXPECT_EQ(s3::ParseError("").code, "");
  EXPECT_EQ(s3::ParseError("<html>bad gateway</html>").code, "");
  EXPECT_EQ(s3::ElementText("<a><KeyCount>3</KeyCount><Key/></a>", "Key"), "");
  EXPECT_EQ(s3::ElementText("<x>a & b; &bogus; &#xZZ; &#65;</x>", "x"), "a & b; &bogus; &#xZZ; A");
  EXPECT_EQ(s3::ElementText("<y>1</y>", "x"), std::nullopt);
}

TEST(S3Xml, DeleteRequestRoundTripsEveryKey) {
  const std::vector<std::string> keys = {"p/packs/ab.pack", "p/a&b <c> \"d\" 'e'", "p/line\nfeed\r\tx",
                                         "p/\xc3\xbc"};
  auto xml = s3::EncodeDeleteRequest(keys);
  ASSERT_TRUE(xml.has_value());
  EXPECT_TRUE(xml->starts_with("<?xml")) << *xml;
  EXPECT_NE(xml->find("<Delete><Quiet>false</Quiet><Object><Key>p/packs/ab.pack</Key></Object>"), std::string::npos)
      << *xml;
  // No byte an XML reader would change: markup characters and line ends are references.
  EXPECT_EQ(xml->find('\n'), std::string::npos);
  EXPECT_EQ(xml->find('\r'), std::string::npos);
  EXPECT_EQ(xml->find("<c>"), std::string::npos);
  // What a server reads back from it is the keys again, in order.
  std::vector<std::string> read;
  for (size_t at = xml->find("<Key>"); at != std::string::npos; at = xml->find("<Key>", at + 1))
    read.push_back(*s3::ElementText(xml->substr(at), "Key"));
  EXPECT_EQ(read, keys);
  EXPECT_FALSE(s3::EncodeDeleteRequest({}).has_value());
  EXPECT_FALSE(s3::EncodeDeleteRequest({"p/ok", std::string("p/nul\0x", 7)}).has_value());
  EXPECT_FALSE(s3::EncodeDeleteRequest({"p/bell\x07"}).has_value());
}

TEST(S3Xml, DeleteResultNamesWhatWentAndWhatDidNot) {
  auto r = s3::ParseDeleteResult(
      R"(<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
      R"(<Deleted><Key>p/a</Key></Deleted>)"
      R"(<Error><Key>p/b&amp;c</Key><Code>AccessDenied</Code><Message>no &lt;way&gt;</Message></Error>)"
      R"(<Deleted><Key>p/d</Key><DeleteMarker>true</DeleteMarker><DeleteMarkerVersionId>v1</DeleteMarkerVersionId></Deleted>)"
      R"(<Error><Key>p/e</Key><Code>InternalError</Code></Error></DeleteResult>)");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->deleted, (std::vector<std::string>{"p/a", "p/d"}));
  ASSERT_EQ(r->failed.size(), 2u);
  EXPECT_EQ(r->failed[0].key, "p/b&c");
  EXPECT_EQ(r->failed[0].code, "AccessDenied");
  EXPECT_EQ(r->failed[0].message, "no <way>");
  EXPECT_EQ(r->failed[1].key, "p/e");
  EXPECT_EQ(r->failed[1].code, "InternalError");
  EXPECT_EQ(r->failed[1].message, "");
  // Quiet mode (or nothing to say) is an empty result, not an unreadable one.
  auto quiet = s3::ParseDeleteResult("<DeleteResult></DeleteResult>");
  ASSERT_TRUE(quiet.has_value());
  EXPECT_TRUE(quiet->deleted.empty());
  EXPECT_TRUE(quiet->failed.empty());
  // Not an answer to go by: an error document, an entry without its key, a cut-off answer.
  EXPECT_FALSE(s3::ParseDeleteResult("<Error><Code>MalformedXML</Code></Error>").has_value());
  EXPECT_FALSE(s3::ParseDeleteResult("<DeleteResult><Deleted><VersionId>1</VersionId></Deleted></DeleteResult>"));
  EXPECT_FALSE(s3::ParseDeleteResult("<DeleteResult><Error><Code>x</Code></Error></DeleteResult>"));
  EXPECT_FALSE(s3::ParseDeleteResult("<DeleteResult><Deleted><Key>p/a</Key></Deleted>"));
}

TEST(S3Request, ContentMd5IsTheBase64OfTheDigest) {
  // RFC 1321's test values, in base64 as Content-MD5 carries them.
  EXPECT_EQ(s3::ContentMd5(""), "1B2M2Y8AsgTpgAmY7PhCfg==");  // d41d8cd98f00b204e9800998ecf8427e
  EXPECT_EQ(s3::ContentMd5("abc"), "kAFQmDzST7DWlj99KOF/cg==");  // 900150983cd24fb0d6963f7d28e17f72
  EXPECT_NE(s3::ContentMd5("abd"), s3::ContentMd5("abc"));
}

TEST(S3Request, PercentEncode) {
  EXPECT_EQ(s3::PercentEncode("a/b c+d%e~f_g.h-i", true), "a/b%20c%2Bd%25e~f_g.h-i");
  EXPECT_EQ(s3::PercentEncode("a/b=", false), "a%2Fb%3D");
  EXPECT_EQ(s3::PercentEncode("\xc3\xbc", true), "%C3%BC");
  EXPECT_EQ(s3::StripQuotes("\"abc\""), "abc");
  EXPECT_EQ(s3::StripQuotes("abc"), "abc");
  EXPECT_EQ(s3::StripQuotes("\""), "\"");
}

TEST(S3Request, HeaderLines) {
  EXPECT_TRUE(s3::ParseHeaderLine("HTTP/1.1 100 Continue\r\n").starts_response);
  EXPECT_FALSE(s3::ParseHeaderLine("X-HTTP/1.1: 1\r\n").starts_response);
  EXPECT_EQ(s3::ParseHeaderLine("ETag: \"0123abcd\"\r\n").etag, "0123abcd");
  EXPECT_EQ(s3::ParseHeaderLine("etag:\t \"ab-3\"  \r\n").etag, "ab-3");
  EXPECT_EQ(s3::ParseHeaderLine("ETAG: bare\r\n").etag, "bare");
  // Unusable tags are dropped, not echoed into If-Match.
  EXPECT_EQ(s3::ParseHeaderLine("ETag: W/\"weak\"\r\n").etag, "");
  EXPECT_EQ(s3::ParseHeaderLine("ETag: \" ab\"\r\n").etag, "");
  EXPECT_EQ(s3::ParseHeaderLine("ETag: \"a\rX-Evil: 1\"\r\n").etag, "");
  EXPECT_EQ(s3::ParseHeaderLine("ETag: \"\"\"\r\n").etag, "");
  EXPECT_EQ(s3::ParseHeaderLine("ETag: \"\xc3\xbc\"\r\n").etag, "");
  EXPECT_EQ(s3::ParseHeaderLine("ETags: \"x\"\r\n").etag, std::nullopt);
  EXPECT_EQ(s3::ParseHeaderLine("ETag \"x\"\r\n").etag, std::nullopt);
  EXPECT_EQ(s3::ParseHeaderLine("\r\n").etag, std::nullopt);
}

TEST(S3Request, ContentLength) {
  EXPECT_EQ(s3::ParseHeaderLine("Content-Length: 1048576\r\n").content_length, 1048576u);
  EXPECT_EQ(s3::ParseHeaderLine("content-length:0\r\n").content_length, 0u);
  EXPECT_EQ(s3::ParseHeaderLine("Content-Length: 18446744073709551615\r\n").content_length, UINT64_MAX);
  for (const char* junk : {"-1", "+5", "", "abc", "12abc", "1 2", "0x10", "18446744073709551616", "99999999999999999999999"})
    EXPECT_EQ(s3::ParseHeaderLine(std::string("Content-Length: ") + junk + "\r\n").content_length, std::nullopt)
        << junk;
  // A server's Content-Length is only a hint for the first allocation.
  EXPECT_EQ(s3::BodyReserve(0), 0u);
  EXPECT_EQ(s3::BodyReserve(1 << 20), 1u << 20);
  EXPECT_EQ(s3::BodyReserve(s3::kMaxBodyReserve), s3::kMaxBodyReserve);
  EXPECT_EQ(s3::BodyReserve(4ull << 30), s3::kMaxBodyReserve);
  EXPECT_EQ(s3::BodyReserve(UINT64_MAX), s3::kMaxBodyReserve);
}

TEST(S3Keys, PackNames) {
  const std::string name = std::string(64, 'a') + ".pack";
  EXPECT_EQ(s3::PackNameFromKey("packs/" + name), name);
  EXPECT_EQ(s3::PackNameFromKey("packs/"), std::nullopt);
  EXPECT_EQ(s3::PackNameFromKey("packs"), std::nullopt);
  EXPECT_EQ(s3::PackNameFromKey("p"), std::nullopt);  // shorter than the folder
  EXPECT_EQ(s3::PackNameFromKey(""), std::nullopt);
  EXPECT_EQ(s3::PackNameFromKey("refs/" + name), std::nullopt);
  EXPECT_EQ(s3::PackNameFromKey("packs/x/" + name), std::nullopt);
  EXPECT_EQ(s3::PackNameFromKey("packs/../" + name), std::nullopt);
  EXPECT_EQ(s3::PackNameFromKey("packs/" + std::string(64, 'A') + ".pack"), std::nullopt);
  EXPECT_EQ(s3::PackNameFromKey("packs/" + name + std::string(1, '\0')), std::nullopt);
  EXPECT_EQ(s3::PackNameFromKey("packs/" + std::string(64, 'a') + ".tmp"), std::nullopt);
}

TEST(S3Keys, RefNames) {
  EXPECT_EQ(s3::RefNameFromKey("refs/main"), "main");
  EXPECT_EQ(s3::RefNameFromKey("refs/team/x"), "team/x");
  for (const std::string& bad : std::vector<std::string>{"refs/", "refs", "r", "", "packs/main", "refs//main",
                                                          "refs/../main", "refs/a/../b", "refs/a/", "refs/.hidden",
                                                          "refs/-x", "refs/a b", std::string("refs/a\0b", 8)})
    EXPECT_EQ(s3::RefNameFromKey(bad), std::nullopt) << bad;
}

TEST(S3Location, FromUrl) {
  auto l = S3Location::FromUrl("s3://my-bucket/team/store/", "http://127.0.0.1:7480/");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->bucket, "my-bucket");
  EXPECT_EQ(l->prefix, "team/store");
  EXPECT_EQ(l->endpoint, "http://127.0.0.1:7480");
  EXPECT_EQ(l->Url(), "s3://my-bucket/team/store");
  auto bare = S3Location::FromUrl("s3://bkt", "https://s3.example.com");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->prefix, "");
  EXPECT_EQ(bare->Url(), "s3://bkt");
  for (const char* bad : {"bkt/x", "s3://", "s3://ab", "s3://Upper", "s3://bkt//x", "s3://-bkt"}) {
    auto r = S3Location::FromUrl(bad, "http://h");
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
  }
  for (const char* bad : {"", "127.0.0.1:7480", "http://", "http://h/path"}) {
    EXPECT_EQ(S3Location::FromUrl("s3://bkt", bad).status().code(), Status::Code::kInvalidArgument) << bad;
  }
}

// Each segment of the prefix becomes part of every key: "." and ".." would be
// resolved somewhere between here and the bucket, an empty one is another key,
// and a control character would end up in messages and requests.
TEST(S3Location, RefusesPrefixSegmentsThatDoNotNameOnePlace) {
  for (std::string bad : std::vector<std::string>{"s3://bkt1/a/../../bktx/z", "s3://bkt1/p/./q", "s3://bkt1/.", "s3://bkt1/..",
                          "s3://bkt1/p//q", "s3://bkt1/p/.", "s3://bkt1/p\nq", "s3://bkt1/p\rq",
                          "s3://bkt1/p\x7fq", "s3://bkt1/p\tq", std::string("s3://bkt1/p\0q", 13)}) {
    auto r = S3Location::FromUrl(bad, "http://h");
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  }
  for (const char* good : {"s3://bkt1/a.b/..c/c..", "s3://bkt1/.hidden/x", "s3://bkt1/a b"})
    EXPECT_TRUE(S3Location::FromUrl(good, "http://h").ok()) << good;
}

TEST(S3Location, ValidatesEveryFieldThatGoesIntoARequest) {
  auto l = S3Location::FromUrl("s3://bkt1/p", "http://127.0.0.1:7480");
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->Validate().ok());
  for (std::string region :
       std::vector<std::string>{"us-east-1\r\nX-Injected: 1", "", "us east", "US", std::string(33, 'a')}) {
    S3Location bad = *l;
    bad.region = region;
    EXPECT_EQ(bad.Validate().code(), Status::Code::kInvalidArgument) << region;
  }
  for (std::string endpoint : std::vector<std::string>{"http://h\r\nX: 1", "http://h x", "http://u@h", "http://h?x", "http://h#x"}) {
    S3Location bad = *l;
    bad.endpoint = endpoint;
    EXPECT_EQ(bad.Validate().code(), Status::Code::kInvalidArgument) << endpoint;
  }
  S3Location bad = *l;
  bad.prefix = "a/../b";  // as remote.json could hold it
  EXPECT_EQ(bad.Validate().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(S3Client::Create(bad, S3Credentials{"k", "s"}).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(S3Client::Create(*l, S3Credentials{"k\r\nX: 1", "s"}).status().code(), Status::Code::kInvalidArgument);
}

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  void Set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(S3Credentials, FromEnvironmentAndFile) {
  testing::TempDir dir;
  std::string file = dir.path() + "/credentials";
  std::ofstream(file) << "# comment\n[default]\naws_access_key_id = DEF\naws_secret_access_key=defsecret\n\n"
                         "[profile other]\r\naws_access_key_id=OTH\r\naws_secret_access_key = othsecret\r\n";
  ScopedEnv env;
  env.Set("AWS_ACCESS_KEY_ID", "ENVKEY");
  env.Set("AWS_SECRET_ACCESS_KEY", "envsecret");
  env.Set("AWS_SHARED_CREDENTIALS_FILE", file.c_str());
  env.Set("AWS_PROFILE", nullptr);
  auto c = S3Credentials::FromEnvironment();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key, "ENVKEY");

  env.Set("AWS_ACCESS_KEY_ID", nullptr);
  EXPECT_TRUE(S3Credentials::FromEnvironment().status().IsNotFound()) << "only the secret is set";
  env.Set("AWS_SECRET_ACCESS_KEY", nullptr);
  c = S3Credentials::FromEnvironment();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key, "DEF");
  EXPECT_EQ(c->secret_key, "defsecret");
  env.Set("AWS_PROFILE", "other");
  c = S3Credentials::FromEnvironment();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key, "OTH");
  EXPECT_EQ(c->secret_key, "othsecret");
  env.Set("AWS_PROFILE", "absent");
  Status st = S3Credentials::FromEnvironment().status();
  EXPECT_TRUE(st.IsNotFound());
  EXPECT_NE(st.message().find("AWS_ACCESS_KEY_ID"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("[absent]"), std::string::npos) << st.ToString();
  env.Set("AWS_SHARED_CREDENTIALS_FILE", (dir.path() + "/none").c_str());
  EXPECT_TRUE(S3Credentials::FromEnvironment().status().IsNotFound());
}

// A device would be read for ever (and fill memory), a FIFO would block: only
// a regular file of bounded size is read.
TEST(S3Credentials, ReadsOnlyARegularFileOfBoundedSize) {
  testing::TempDir dir;
  ScopedEnv env;
  env.Set("AWS_ACCESS_KEY_ID", nullptr);
  env.Set("AWS_SECRET_ACCESS_KEY", nullptr);
  env.Set("AWS_PROFILE", nullptr);
  std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string big = dir.path() + "/big";
  std::ofstream(big) << "[default]\naws_access_key_id=A\naws_secret_access_key=B\n" << std::string(100000, '#');
  for (const std::string& path : std::vector<std::string>{"/dev/zero", fifo, big, dir.path()}) {
    env.Set("AWS_SHARED_CREDENTIALS_FILE", path.c_str());
    Status s = S3Credentials::FromEnvironment().status();
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << path << ": " << s.ToString();
  }
}

}  // namespace
}  // namespace strata
