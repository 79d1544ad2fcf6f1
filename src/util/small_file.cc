#include "util/small_file.h"

#include <fstream>
#include <sstream>

namespace strata {

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace strata
