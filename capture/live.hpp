// Live capture during a run (DESIGN.md §1, capture/): libpcap on the interface
// that reaches the target, filtered to the target's address and port, on its
// own thread, set up as tcpdump sets it up; every saved packet has its Apikey
// header value overwritten in place before it is written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct addrinfo;

namespace crh::capture {

struct LiveConfig {
  std::string file;         // the pcap file to write (written to FILE.partial, renamed when stopped)
  std::string target_host;  // the target's address or name, as in the base URL
  std::uint16_t target_port = 0;
  // Empty: the interface the route to the target leaves by ("lo" for
  // loopback); when the target's addresses leave by different ones, "any".
  std::string interface;
  int buffer_bytes =
      32 * 1024 * 1024;  // kernel buffer (pcap_set_buffer_size); libpcap's 2 MiB default drops under load
  int snaplen = 262144;  // loopback segments exceed 65,535 bytes
  // Immediate mode (one packet per kernel frame, frames sized by the MTU:
  // 64 KiB on loopback) dropped 13,053 of 311,284 packets in a 2 s `crh load
  // --scenario get` on loopback with a 32 MiB buffer; without it (packets
  // packed in blocks handed over every 50 ms) none. A file written after the
  // run needs no prompt delivery, and timestamps are the kernel's either way.
  bool immediate = false;
  std::uint64_t limit_bytes = 0;  // 0: unbounded; past it capture stops and says so
  std::string api_key;            // overwritten in every saved packet, wherever it is
  // SIP calls (issue 26): the SIP target's host and port, captured over UDP
  // and TCP beside the HTTP traffic; port 0: none. Digest credentials are
  // overwritten in every saved packet (sip_redaction.hpp).
  std::string sip_host;
  std::uint16_t sip_port = 0;
};

// What a capture did, for the result document and the terminal.
struct LiveSummary {
  bool made = false;  // a capture ran and the file was written
  std::string file;
  std::string interface;
  std::string filter;                   // the BPF filter applied: every address of the target
  std::string not_made;                 // why no capture was made (permission, no interface, ...), when !made
  std::vector<std::string> warnings;    // pcap_activate warnings, checksum notes, limit reached, drops
  std::uint64_t packets = 0;            // written to the file
  std::uint64_t bytes = 0;              // file size
  std::uint64_t kernel_received = 0;    // pcap_stats ps_recv
  std::uint64_t kernel_dropped = 0;     // ps_drop (buffer full): packets lost to the file
  std::uint64_t interface_dropped = 0;  // ps_ifdrop
  // On Linux loopback every packet passes the capture twice, out and in. The
  // outgoing copies are refused in the kernel (PACKET_IGNORE_OUTGOING); where
  // that is not supported, libpcap drops them and the kernel counts each twice.
  bool loopback = false;
  bool counted_twice = false;
  std::uint64_t limit_bytes = 0;        // the --capture-limit asked for; 0: none
  bool limit_reached = false;
  std::uint64_t redactions = 0;       // Apikey values and SIP digest values overwritten
  bool checksums_recomputed = false;  // edited segments got a new TCP or UDP checksum (not on loopback: offload)
  bool lost_packets() const { return kernel_dropped > 0 || interface_dropped > 0; }
};

// The capture could not be made and the run asked for one (--capture-required).
struct CaptureUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class LiveCapture {
 public:
  // Opens and activates the capture and starts its thread; when it cannot
  // (no permission, no interface), summary().made is false and
  // summary().not_made says why: the run goes on without it.
  explicit LiveCapture(LiveConfig config);
  ~LiveCapture();  // stops, as stop() does
  LiveCapture(const LiveCapture&) = delete;
  LiveCapture& operator=(const LiveCapture&) = delete;

  bool running() const;
  // Waits briefly for the packets still in the kernel's buffer, stops the
  // thread, writes the file whole (rename) and returns the final summary.
  const LiveSummary& stop();
  const LiveSummary& summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

namespace detail {

// The numeric addresses of a getaddrinfo list, in its order, each once,
// without an IPv6 scope: every endpoint the engine may connect to.
std::vector<std::string> numeric_addresses(const ::addrinfo* list);

// The capture filter for those addresses and the target's port:
// "tcp and host A and port P", or "tcp and (host A or host B) and port P".
std::string capture_filter(const std::vector<std::string>& addresses, std::uint16_t port);
// With SIP too: "(HTTP's filter) or ((tcp or udp) and host S and port Q)".
std::string capture_filter(const std::vector<std::string>& addresses, std::uint16_t port,
                           const std::vector<std::string>& sip_addresses, std::uint16_t sip_port);

}  // namespace detail

}  // namespace crh::capture
