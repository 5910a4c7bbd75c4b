// libFuzzer target for the response reader (core/http1) of the load path and
// the blocking client: the input, cut into pieces where its first bytes say,
// goes through one reader as pipelined answers, the body kept or not, then
// eof; the reader must keep its invariants whatever a hostile target sends.
//
// Input: byte 0 = flags (bits 0-2: how many cut bytes follow; bit 3: small
// limits; bit 4: keep the body of the first answer, then alternate; bit 5:
// capture headers; bit 6: answers to HEAD; bit 7: the request asked for an
// upgrade), then the cut bytes (each a piece length - 1, used in turn), then
// the answers.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/http1.hpp"

namespace {

using crh::core::http1::Asked;
using crh::core::http1::Fault;
using crh::core::http1::HeaderCapture;
using crh::core::http1::ReaderLimits;
using crh::core::http1::ResponseReader;
using State = ResponseReader::State;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "response reader invariant broken: %s\n", what);
  std::abort();
}

// What must hold whenever the reader has ended an answer or given up.
void check_ended(const ResponseReader& r, const ReaderLimits& limits, bool keep_body, Asked asked) {
  if (r.state() == State::error) {
    check(!r.error().empty(), "an error without a reason");
    check(r.fault() != Fault::none, "an error without a fault");
    check(!r.keep_alive(), "a connection kept alive after an error");
    return;
  }
  check(r.state() == State::done, "ended neither done nor in error");
  check(r.error().empty() && r.fault() == Fault::none, "done with a reason for an error");
  const bool upgraded = asked.upgrade && r.status() == 101;
  check((r.status() >= 200 && r.status() <= 999) || upgraded,
        "a final answer outside 200..999 (an interim or no status, or an unasked 101)");
  if (upgraded) check(!r.keep_alive() && r.body_size() == 0, "an upgraded connection kept as HTTP");
  if (asked.head) check(r.body_size() == 0, "a body in an answer to HEAD");
  check(r.interim_answers() <= limits.interim_answers, "more interim answers skipped than the limit");
  check(r.body_size() <= limits.body_bytes, "a body beyond the limit");
  if (keep_body) check(r.body().size() == r.body_size(), "the kept body differs from its counted size");
  else check(r.body().empty(), "a body kept although not asked for");
  if (r.retry_after()) check(*r.retry_after() >= 0, "a negative Retry-After");
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
  if (flags & 8u) limits = ReaderLimits{.header_bytes = 128, .body_bytes = 64, .interim_answers = 3};
  const bool capture = (flags & 32u) != 0;
  const Asked asked{.head = (flags & 64u) != 0, .upgrade = (flags & 128u) != 0};
  ResponseReader reader(limits, capture ? HeaderCapture::on : HeaderCapture::off);
  bool keep_body = (flags & 16u) != 0;
  reader.reset(keep_body, asked);

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
      check_ended(reader, limits, keep_body, asked);
      check(capture || (reader.headers().empty() && reader.trailers().empty()), "headers kept although not asked for");
      // An ended reader takes nothing more and stays as it is until reset.
      const State ended = reader.state();
      check(reader.feed(piece.substr(used)) == 0, "an ended reader consumed input");
      reader.eof();
      check(reader.state() == ended, "eof changed an ended reader");
      if (ended == State::error) return 0;  // the engine closes the connection here
      piece.remove_prefix(used);
      keep_body = !keep_body;  // the next pipelined answer, the other way round
      reader.reset(keep_body, asked);
      check(reader.state() == State::need_more && reader.status() == 0 && reader.body_size() == 0 &&
                reader.body().empty() && reader.error().empty() && reader.keep_alive() && !reader.retry_after() &&
                reader.headers().empty() && reader.trailers().empty() && !reader.started(),
            "reset left something of the previous answer");
    }
  }
  reader.eof();
  check(reader.state() != State::need_more, "eof left the reader waiting");
  check_ended(reader, limits, keep_body, asked);
  return 0;
}
