// libFuzzer target for the request reader (core/http1), which wire capture
// will feed whatever a client sent: the input, cut into pieces where its
// first bytes say, goes through one reader as pipelined requests, the body
// kept or not, then eof; the reader must keep its invariants, and every
// request it accepts must have one framing (no Transfer-Encoding with
// Content-Length, chunked last), whatever the bytes.
//
// Input: byte 0 = flags (bits 0-2: how many cut bytes follow; bit 3: small
// limits; bit 4: keep the body of the first request, then alternate; bit 5:
// capture headers), then the cut bytes (each a piece length - 1, used in
// turn), then the requests.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/http1.hpp"

namespace {

using crh::core::http1::Fault;
using crh::core::http1::HeaderCapture;
using crh::core::http1::iequals;
using crh::core::http1::ReaderLimits;
using crh::core::http1::RequestReader;
using State = RequestReader::State;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "request reader invariant broken: %s\n", what);
  std::abort();
}

// With headers captured, the framing they declare must be one the reader
// could not have read two ways.
void check_framing(const RequestReader& r) {
  bool length = false, coding = false;
  for (const auto& h : r.headers()) {
    length = length || iequals(h.name, "content-length");
    coding = coding || iequals(h.name, "transfer-encoding");
  }
  check(!(length && coding), "a request with both Content-Length and Transfer-Encoding accepted");
}

// What must hold whenever the reader has ended a request or given up.
void check_ended(const RequestReader& r, const ReaderLimits& limits, bool keep_body, bool capture) {
  if (r.state() == State::error) {
    check(!r.error().empty(), "an error without a reason");
    check(r.fault() != Fault::none && r.fault() != Fault::too_many_interim && r.fault() != Fault::unasked_upgrade,
          "an error without a fault, or with one only answers have");
    check(!r.keep_alive(), "a connection kept alive after an error");
    return;
  }
  check(r.state() == State::done, "ended neither done nor in error");
  check(r.error().empty() && r.fault() == Fault::none, "done with a reason for an error");
  check(!r.method().empty() && !r.target().empty(), "a request without a method or a target");
  check(r.target().size() + r.method().size() + 10 <= limits.request_line_bytes, "a request line beyond the limit");
  check(r.version() >= 10 && r.version() <= 19, "a version other than HTTP/1.x");
  check(r.body_size() <= limits.body_bytes, "a body beyond the limit");
  if (keep_body) check(r.body().size() == r.body_size(), "the kept body differs from its counted size");
  else check(r.body().empty(), "a body kept although not asked for");
  if (capture) check_framing(r);
  else check(r.headers().empty() && r.trailers().empty(), "headers kept although not asked for");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t cut_count = flags & 7u;
  if (size < 1 + cut_count) return 0;
  const std::uint8_t* cuts = data + 1;
  std::string_view input(reinterpret_cast<const char*>(data + 1 + cut_count), size - 1 - cut_count);

  ReaderLimits limits;
  if (flags & 8u)
    limits = ReaderLimits{.header_bytes = 128, .body_bytes = 64, .chunk_line_bytes = 32, .request_line_bytes = 48};
  const bool capture = (flags & 32u) != 0;
  RequestReader reader(limits, capture ? HeaderCapture::on : HeaderCapture::off);
  bool keep_body = (flags & 16u) != 0;
  reader.reset(keep_body);

  std::size_t next_cut = 0;
  while (!input.empty()) {
    const std::size_t want = cut_count ? std::size_t{1} + cuts[next_cut++ % cut_count] : input.size();
    std::string_view piece = input.substr(0, want);
    input.remove_prefix(piece.size());
    while (!piece.empty()) {
      const std::size_t used = reader.feed(piece);
      check(used <= piece.size(), "feed consumed more than it was given");
      if (reader.state() == State::need_more) {
        // Waiting for more while holding unread input would stall the connection.
        check(used == piece.size(), "need_more with input left over");
        check(reader.body_size() <= limits.body_bytes, "a body beyond the limit while reading");
        piece.remove_prefix(used);
        continue;
      }
      check_ended(reader, limits, keep_body, capture);
      // An ended reader takes nothing more and stays as it is until reset.
      const State ended = reader.state();
      check(reader.feed(piece.substr(used)) == 0, "an ended reader consumed input");
      reader.eof();
      check(reader.state() == ended, "eof changed an ended reader");
      if (ended == State::error) return 0;  // a server closes the connection here
      piece.remove_prefix(used);
      keep_body = !keep_body;  // the next pipelined request, the other way round
      reader.reset(keep_body);
      check(reader.state() == State::need_more && reader.method().empty() && reader.target().empty() &&
                reader.version() == 0 && reader.body_size() == 0 && reader.body().empty() && reader.error().empty() &&
                reader.keep_alive() && reader.headers().empty() && reader.trailers().empty() && !reader.started(),
            "reset left something of the previous request");
    }
  }
  // Requests have no close-delimited body: a close ends none, and says
  // whether it came between requests or within one.
  const bool midway = reader.started();
  reader.eof();
  check(reader.state() == State::error && reader.fault() == Fault::closed, "eof ended a request");
  check((reader.error().find("in the middle") != std::string_view::npos) == midway,
        "a close between requests taken for one within a request, or the other way round");
  return 0;
}
