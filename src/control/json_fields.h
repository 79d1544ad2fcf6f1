// Strict reading of the control protocol's JSON objects (protocol.cc only).
//
// A FieldReader reads the fields of one JSON object by name and type. Every
// field it is asked for must be there with that type, and Finish() refuses
// any field nobody asked for, so that a message from another version of
// strata, or a hostile one, is an error naming the field rather than a value
// read wrongly or an exception. The first problem found is kept (in the
// string the readers of one message share); later reads return zeros.
// Thread-safety: a FieldReader is used by one thread.
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "util/hash.h"

namespace strata::control {

using Json = nlohmann::ordered_json;

class FieldReader {
 public:
  // path names the object in messages ("" for the message itself); problem
  // holds the first problem of the whole message ("" while there is none).
  FieldReader(const Json& object, std::string path, std::string* problem);

  uint64_t Unsigned(const char* key);
  uint32_t Unsigned32(const char* key);
  int64_t Signed(const char* key);
  double Number(const char* key);  // any JSON number
  bool Bool(const char* key);
  std::string String(const char* key);
  Hash Id(const char* key);                     // 64 hex digits
  std::optional<Hash> IdOrNull(const char* key);  // 64 hex digits, or null
  FieldReader Object(const char* key);
  // A reader of value, an element of an array or map of this object, named name.
  FieldReader Child(const Json& value, const std::string& name) const;
  // The array at key (an empty one after a problem).
  const Json& Array(const char* key);
  // The object at key, whose fields are named by the sender (an empty one after a problem).
  const Json& Map(const char* key);

  // Refuses the fields nobody asked for. Call once all were read.
  void Finish();

  // Records a problem of this object's field key (or of the object when key is "").
  void Fail(const std::string& key, const std::string& what);
  std::string Where(const std::string& key) const;

 private:
  // The field key if it is there; a problem ("missing") otherwise.
  const Json* Field(const char* key);
  // The array or object at key (an empty one, and a problem, for anything else).
  const Json& Container(const char* key, Json::value_t type);
  const Json& object_;
  std::string path_;
  std::string* problem_;
  std::set<std::string> read_;
};

}  // namespace strata::control
