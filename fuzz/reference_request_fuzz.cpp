// libFuzzer target: bytes from a hostile peer, read as pipelined requests by
// the reference service's own synchronous path (Beast's parser, the framing
// checks, Service::handle), as one connection would be. Crashes on a broken
// answer shape or on framing the checks and Beast's parser read differently.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "reference/exchange.hpp"

namespace {
using namespace crh::reference;
namespace http = boost::beast::http;

// Time stands still: runs must repeat exactly.
class FixedClock final : public Clock {
 public:
  time_point now() const override { return time_point(std::chrono::hours(24 * 365)); }
  std::string rfc3339(time_point t) const override {
    return format_rfc3339(std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(t.time_since_epoch())));
  }
};

[[noreturn]] void fail(const char* what, const Response& r) {
  std::fprintf(stderr, "reference_request_fuzz: %s: HTTP %u %s body %s\n", what, r.status, r.content_type.c_str(),
               r.body.c_str());
  std::abort();
}

// Every answer is JSON; an error answer is an object with a non-empty msg.
void check_answer(const Response& r) {
  if (r.status < 200 || r.status > 599) fail("status out of range", r);
  if (r.content_type != "application/json") fail("not JSON", r);
  boost::system::error_code ec;
  auto v = boost::json::parse(r.body, ec);
  if (ec) fail("body does not parse as JSON", r);
  if (r.status >= 400) {
    const auto* o = v.if_object();
    const auto* msg = o ? o->if_contains("msg") : nullptr;
    if (!msg || !msg->is_string() || msg->get_string().empty()) fail("error without a msg", r);
  }
  if (r.status >= 500 && r.status != 501) fail("a 5xx answer to a peer's bytes", r);
}

// Feeds `in` to the parser until `done` holds; false when the bytes run out
// first (the peer closed: the server drops the connection without answering).
template <class Done>
bool feed(RequestParser& parser, std::string_view& in, boost::system::error_code& ec, Done done) {
  while (!done()) {
    const std::size_t used = parser.put(boost::asio::buffer(in.data(), in.size()), ec);
    in.remove_prefix(used);
    if (ec == http::error::need_more) {
      ec = {};
      if (used == 0) return false;
      continue;
    }
    if (ec) return true;
    if (used == 0 && !done()) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixtures fixtures = default_fixtures();
  FixedClock clock;
  ServiceConfig config;
  config.api_key = "fuzz-key";
  config.minute = std::chrono::milliseconds(1000);
  Service service(config, fixtures, clock);  // fresh per input: state never leaks between runs
  const ReadLimits limits;

  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (int requests = 0; requests < 100 && !in.empty(); ++requests) {
    RequestParser parser;
    apply_limits(parser, limits);
    boost::system::error_code ec;
    if (!feed(parser, in, ec, [&] { return parser.is_header_done(); })) return 0;
    if (ec) {
      check_answer(read_error_answer(service, ec, limits));
      return 0;  // the server answers and closes
    }
    // The RFC rules and Beast's parser should read the framing alike; where
    // they do not, only framing_error's last check keeps the body from being
    // read as a request. Worth knowing about even though it answers 400.
    if (auto err = framing_error(parser); err && err->problem == FramingProblem::te_parser_disagrees) {
      std::fprintf(stderr,
                   "reference_request_fuzz: the framing rules accept Transfer-Encoding "
                   "but Beast did not read it as chunked\n");
      std::abort();
    }
    if (auto refusal = refuse_head(service, parser)) {
      check_answer(*refusal);
      return 0;  // the server answers and closes: nothing after the head is read
    }
    if (!feed(parser, in, ec, [&] { return parser.is_done(); })) return 0;
    if (ec) {
      check_answer(read_error_answer(service, ec, limits));
      return 0;
    }
    Handled handled = handle_request(service, parser.get());
    // The server waits reply.wait on a timer first; the answer is the same.
    Response response = handled.reply.then ? handled.reply.then() : std::move(handled.reply.response);
    check_answer(response);
    if (!handled.keep_alive) return 0;
  }
  return 0;
}
