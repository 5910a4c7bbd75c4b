#include "peer_ready.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace crh::test {
namespace {

using namespace std::chrono_literals;

// One line of /proc/net/{tcp,udp}{,6}: "sl local_address rem_address st ...",
// local_address as HEXIP:HEXPORT. TCP's state 0A is LISTEN; a bound UDP socket is 07.
bool bound_in(const std::string& table, unsigned short port, const char* state) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, st;
    if (!(fields >> slot >> local >> remote >> st)) continue;
    auto colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    if (std::stoul(local.substr(colon + 1), nullptr, 16) == port && st == state) return true;
  }
  return false;
}

template <class Ready>
bool poll_until(Ready ready, std::chrono::milliseconds deadline) {
  for (auto end = std::chrono::steady_clock::now() + deadline;;) {
    if (ready()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(10ms);
  }
}

}  // namespace

bool wait_for_listener(unsigned short port, Transport transport, std::chrono::milliseconds deadline) {
  const bool tcp = transport == Transport::tcp;
  const char* state = tcp ? "0A" : "07";
  const std::string base = tcp ? "/proc/net/tcp" : "/proc/net/udp";
  return poll_until([&] { return bound_in(base, port, state) || bound_in(base + "6", port, state); }, deadline);
}

bool wait_for_text(const std::string& path, const std::string& line, std::chrono::milliseconds deadline) {
  return poll_until(
      [&] {
        std::ifstream in(path);
        std::string text((std::istreambuf_iterator<char>(in)), {});
        return text.find(line) != std::string::npos;
      },
      deadline);
}

bool wait_for_file(const std::string& path, std::uintmax_t bytes, std::chrono::milliseconds deadline) {
  return poll_until(
      [&] {
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        return !ec && size >= bytes;
      },
      deadline);
}

}  // namespace crh::test
