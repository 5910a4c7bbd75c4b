// Reading and generating API keys.
#include "api_key.hpp"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace crh::runners {

std::optional<std::string> configured_api_key(const std::string& key_file, const char* env_name) {
  std::string key;
  if (!key_file.empty()) {
    std::ifstream in(key_file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read the API key file " + key_file);
    std::ostringstream text;
    text << in.rdbuf();
    key = text.str();
    // A trailing newline is how editors and `echo` end files; it is not part of the key.
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
      key.pop_back();
    if (key.empty()) throw std::runtime_error("the API key file " + key_file + " is empty");
  } else if (const char* env = std::getenv(env_name)) {
    key = env;
    if (key.empty())
      throw std::runtime_error(std::string(env_name) + " is set but empty; unset it or give it the key");
  } else {
    return std::nullopt;
  }
  for (char c : key)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw std::runtime_error("the API key holds a control character; an HTTP header cannot carry it");
  return key;
}

std::string random_api_key() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key;
  for (int i = 0; i < 32; ++i) key.push_back(kHex[rd() % 16]);
  return key;
}

}  // namespace crh::runners
