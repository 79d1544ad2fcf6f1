#include "control/json_fields.h"

#include <cmath>

namespace strata::control {
namespace {

const Json& Empty(Json::value_t type) {
  static const Json kArray = Json::array(), kObject = Json::object();
  return type == Json::value_t::array ? kArray : kObject;
}

}  // namespace

FieldReader::FieldReader(const Json& object, std::string path, std::string* problem)
    : object_(object.is_object() ? object : Empty(Json::value_t::object)), path_(std::move(path)), problem_(problem) {
  if (!object.is_object()) Fail("", "is not a JSON object");
}

std::string FieldReader::Where(const std::string& key) const {
  if (path_.empty()) return key.empty() ? "the message" : "field '" + key + "'";
  return "field '" + (key.empty() ? path_ : path_ + "." + key) + "'";
}

void FieldReader::Fail(const std::string& key, const std::string& what) {
  if (problem_->empty()) *problem_ = Where(key) + " " + what;
}

const Json* FieldReader::Field(const char* key) {
  read_.insert(key);
  auto it = object_.find(key);
  if (it == object_.end()) {
    Fail(key, "is missing");
    return nullptr;
  }
  return &*it;
}

uint64_t FieldReader::Unsigned(const char* key) {
  const Json* v = Field(key);
  if (v == nullptr) return 0;
  // A negative integer is number_integer, a fraction number_float: only
  // number_unsigned converts without wrapping or rounding.
  if (!v->is_number_unsigned()) {
    Fail(key, "is not an unsigned integer");
    return 0;
  }
  return v->get<uint64_t>();
}

uint32_t FieldReader::Unsigned32(const char* key) {
  const uint64_t v = Unsigned(key);
  if (v > UINT32_MAX) {
    Fail(key, "is out of range");
    return 0;
  }
  return static_cast<uint32_t>(v);
}

int64_t FieldReader::Signed(const char* key) {
  const Json* v = Field(key);
  if (v == nullptr) return 0;
  if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > INT64_MAX)) {
    Fail(key, "is not a 64-bit integer");
    return 0;
  }
  return v->get<int64_t>();
}

double FieldReader::Number(const char* key) {
  const Json* v = Field(key);
  if (v == nullptr) return 0;
  // JSON has no infinity: 1e999 parses as one, and would be written back as null.
  if (!v->is_number() || !std::isfinite(v->get<double>())) {
    Fail(key, "is not a finite number");
    return 0;
  }
  return v->get<double>();
}

bool FieldReader::Bool(const char* key) {
  const Json* v = Field(key);
  if (v == nullptr) return false;
  if (!v->is_boolean()) {
    Fail(key, "is not true or false");
    return false;
  }
  return v->get<bool>();
}

std::string FieldReader::String(const char* key) {
  const Json* v = Field(key);
  if (v == nullptr) return "";
  if (!v->is_string()) {
    Fail(key, "is not a string");
    return "";
  }
  return v->get<std::string>();
}

Hash FieldReader::Id(const char* key) {
  const Json* v = Field(key);
  if (v == nullptr) return Hash{};
  std::optional<Hash> id = v->is_string() ? Hash::FromHex(v->get<std::string>()) : std::nullopt;
  if (!id) {
    Fail(key, "is not an id (64 hex digits)");
    return Hash{};
  }
  return *id;
}

std::optional<Hash> FieldReader::IdOrNull(const char* key) {
  const Json* v = Field(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  read_.erase(key);  // Id looks it up again
  return Id(key);
}

FieldReader FieldReader::Object(const char* key) {
  const Json* v = Field(key);
  // A missing field has been reported; the reader of an empty object reports nothing more.
  return FieldReader(v != nullptr ? *v : Empty(Json::value_t::object), path_.empty() ? key : path_ + "." + key,
                     problem_);
}

FieldReader FieldReader::Child(const Json& value, const std::string& name) const {
  return FieldReader(value, path_.empty() ? name : path_ + "." + name, problem_);
}

const Json& FieldReader::Array(const char* key) { return Container(key, Json::value_t::array); }

const Json& FieldReader::Map(const char* key) { return Container(key, Json::value_t::object); }

const Json& FieldReader::Container(const char* key, Json::value_t type) {
  const Json* v = Field(key);
  if (v == nullptr) return Empty(type);
  if (v->type() != type) {
    Fail(key, type == Json::value_t::array ? "is not an array" : "is not a JSON object");
    return Empty(type);
  }
  return *v;
}

void FieldReader::Finish() {
  for (const auto& [key, value] : object_.items())
    if (!read_.contains(key)) Fail(key, "is not one this strata knows");
}

}  // namespace strata::control
