// The offline reader's front (its steps are in the files extractor_parts.hpp
// lists): frames in, counted and decoded, to the TCP side; exchanges out
// through the public ExchangeExtractor. Exchanges leave as soon as they end
// and a stream is freed when it closes, so memory follows open streams.
#include "capture/exchanges.hpp"

#include <pcap/pcap.h>

#include <algorithm>

#include "capture/extractor_parts.hpp"

namespace crh::capture {

std::optional<std::int64_t> WireExchange::wire_latency_ns() const {
  if (request_last.frame == 0 || response_last.frame == 0 || !response) return std::nullopt;
  return response_last.ns - request_last.ns;
}

namespace extraction {

void Extractor::packet(int link, std::int64_t ns, std::uint64_t frame, std::string_view bytes,
                       std::size_t wire_length) {
  ++summary.packets;
  if (summary.packets == 1) summary.first_ns = ns;
  summary.last_ns = std::max(summary.last_ns, ns);
  if (bytes.size() < wire_length) ++summary.truncated_packets;
  if (std::find(links_seen.begin(), links_seen.end(), link) == links_seen.end()) {
    links_seen.push_back(link);
    const char* name = pcap_datalink_val_to_name(link);
    if (!summary.link_type.empty()) summary.link_type += ", ";
    summary.link_type += name ? name : std::to_string(link);
  }
  Segment s;
  switch (decode_frame(link, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), s)) {
    case Decoded::tcp: tcp(s, frame, ns); break;
    case Decoded::udp: udp(s, frame, ns); break;
    case Decoded::fragment:
      ++summary.fragments_skipped;
      ++summary.skipped_packets;
      break;
    case Decoded::skipped: ++summary.skipped_packets; break;
  }
  sweep(ns, frame);
}

void Extractor::finish() {
  while (!streams.empty()) close_and_erase(streams.begin(), summary.packets, "ended with the capture");
}

}  // namespace extraction

struct ExchangeExtractor::Impl : extraction::Extractor {};

ExchangeExtractor::ExchangeExtractor(ExchangeSink sink, ReadLimits limits, SipSink sip)
    : impl_(std::make_unique<Impl>()) {
  impl_->sink = std::move(sink);
  impl_->sip_sink = std::move(sip);
  impl_->limits = limits;
  impl_->reader_limits.body_bytes = limits.body_bytes;
}

ExchangeExtractor::~ExchangeExtractor() = default;

void ExchangeExtractor::packet(int link_type, std::int64_t ns, std::uint64_t frame, std::string_view bytes,
                               std::size_t wire_length) {
  impl_->packet(link_type, ns, frame, bytes, wire_length);
}

void ExchangeExtractor::finish() { impl_->finish(); }

const ReadSummary& ExchangeExtractor::summary() const { return impl_->summary; }

std::size_t ExchangeExtractor::open_streams() const { return impl_->streams.size(); }
std::size_t ExchangeExtractor::buffered_bytes() const { return impl_->total_held; }
std::size_t ExchangeExtractor::queued_bytes() const { return impl_->total_queued; }

}  // namespace crh::capture
