// Tests that start a peer (SIPp, tcpdump, a server of their own) wait until it
// is ready, with a deadline and a message, never a fixed sleep: on a loaded
// machine a peer starts late, and a test that guesses fails at random.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace crh::test {

enum class Transport { tcp, udp };

// Waits until a socket of this machine is bound to `port` on loopback (for TCP:
// listening), read from /proc/net, so the peer is not touched. False when
// `deadline` passes first.
bool wait_for_listener(unsigned short port, Transport transport, std::chrono::milliseconds deadline);

// Waits until the file at `path` contains `line` (a peer's own readiness line,
// e.g. tcpdump's "listening on"), polling; false when `deadline` passes first.
bool wait_for_text(const std::string& path, const std::string& line, std::chrono::milliseconds deadline);

// Waits until the file at `path` holds at least `bytes` (a capture file's
// header, say); false when `deadline` passes first.
bool wait_for_file(const std::string& path, std::uintmax_t bytes, std::chrono::milliseconds deadline);

}  // namespace crh::test
