// libFuzzer target over the offline capture reader: the input picks a link
// type and limits, then is cut into frames fed to an ExchangeExtractor, so
// frame decoding, TCP reassembly, the HTTP/1 readers and the SIP readers
// (UDP datagrams, TCP streams) all see hostile bytes.
// Input: [link][limits] then frames as [length hi][length lo][bytes missing][bytes...].
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <pcap/pcap.h>

#include "capture/exchanges.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static constexpr int kLinks[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_NULL, DLT_LOOP, DLT_RAW, 228, 229};
  if (size < 2) return 0;
  const int link = kLinks[data[0] % (sizeof kLinks / sizeof kLinks[0])];
  crh::capture::ReadLimits limits;
  if (data[1] & 1) {
    // Small bounds, so the paths that cut streams and declare gaps run too.
    limits.stream_buffer_bytes = 64;
    limits.total_buffer_bytes = 256;
    limits.max_streams = 3;
    limits.idle_close_ns = 5000;
    limits.body_bytes = 32;
  }
  std::size_t exchanges = 0, sip = 0;
  crh::capture::ExchangeExtractor extractor(
      [&](crh::capture::WireExchange&& e) {
        ++exchanges;
        (void)e.wire_latency_ns();
      },
      limits, [&](crh::capture::WireSipMessage&& m) { sip += m.message || !m.error.empty() ? 1 : 0; });
  std::size_t at = 2;
  std::uint64_t frame = 0;
  std::int64_t ns = 1'000'000'000;
  while (at + 3 <= size) {
    const std::size_t length = (std::size_t{data[at]} << 8) | data[at + 1];
    const std::size_t missing = data[at + 2];
    at += 3;
    const std::size_t take = length < size - at ? length : size - at;
    extractor.packet(link, ns, ++frame, std::string_view(reinterpret_cast<const char*>(data + at), take), take + missing);
    at += take;
    ns += 1000 * (1 + (take & 7));
  }
  extractor.finish();
  const auto& summary = extractor.summary();
  if (summary.exchanges != exchanges || summary.packets != frame) __builtin_trap();
  if (summary.sip_messages + summary.sip_unreadable != sip) __builtin_trap();
  if (extractor.open_streams() != 0 || extractor.buffered_bytes() != 0) __builtin_trap();
  return 0;
}
