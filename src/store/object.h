// Objects and their identity.
//
// Everything in the store is an object of one of three types. Its id is
// SHA-256 over a domain-separated header and the uncompressed bytes:
//
//   id = SHA-256("strata " + TYPE + " " + decimal(len) + "\0" + bytes)
//
// with TYPE one of "chunk", "tree", "commit". The header keeps ids of different
// types apart (a chunk whose bytes happen to equal a tree's encoding gets another
// id) and makes ids independent of compression and packing. See docs/format/objects.md.
#pragma once

#include <cstdint>
#include <string_view>

#include "util/hash.h"

namespace strata {

enum class ObjectType : uint8_t { kChunk = 1, kTree = 2, kCommit = 3 };

bool IsValidObjectType(uint8_t t);
const char* ObjectTypeName(ObjectType t);

Hash ComputeObjectId(ObjectType type, std::string_view data);

}  // namespace strata
