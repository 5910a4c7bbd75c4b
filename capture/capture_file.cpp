// read_capture: a whole pcap or pcapng file read through libpcap (any writer:
// tcpdump, tshark, dumpcap, crh) and fed frame by frame to ExchangeExtractor;
// apart from the extractor, which the fuzz target and tests feed directly.
#include <pcap/pcap.h>

#include <cstdio>

#include "capture/exchanges.hpp"

namespace crh::capture {

ReadSummary read_capture(const std::string& path, const ExchangeSink& sink, ReadLimits limits, const SipSink& sip) {
  char error[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, error);
  if (!p)
    throw CaptureFileError("cannot read capture " + path + ": " + error +
                           " (expected a pcap or pcapng file, as tcpdump -w or tshark -w write)");
  std::string format = "pcap";
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    unsigned char magic[4] = {};
    if (std::fread(magic, 1, 4, f) == 4 && magic[0] == 0x0a && magic[1] == 0x0d && magic[2] == 0x0d && magic[3] == 0x0a)
      format = "pcapng";
    std::fclose(f);
  }
  ExchangeExtractor extractor(sink, limits, sip);
  const int link = pcap_datalink(p);
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  std::uint64_t frame = 0;
  int rc;
  while ((rc = pcap_next_ex(p, &header, &data)) == 1) {
    const std::int64_t ns = static_cast<std::int64_t>(header->ts.tv_sec) * 1'000'000'000 + header->ts.tv_usec;
    extractor.packet(link, ns, ++frame, std::string_view(reinterpret_cast<const char*>(data), header->caplen),
                     header->len);
  }
  std::string read_error;
  if (rc == PCAP_ERROR) read_error = pcap_geterr(p);
  pcap_close(p);
  extractor.finish();
  ReadSummary summary = extractor.summary();
  summary.format = format;
  if (!read_error.empty()) {
    // A file cut short (a capture still being written, a copy interrupted):
    // what came before stands, and the summary says where it stopped.
    UnparsedStream u;
    u.first_frame = frame + 1;
    u.why = "the file ends early after frame " + std::to_string(frame) + ": " + read_error;
    summary.unparsed.push_back(std::move(u));
    ++summary.unparsed_count;
  }
  return summary;
}

}  // namespace crh::capture
