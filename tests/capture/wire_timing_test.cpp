// Wire timing: exchanges paired with the client's records (by port, connect
// time and order on the connection), the figures in the document, read back
// and merged, rendered; and a real load captured by tcpdump on loopback.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "capture/wire_timing.hpp"
#include "core/base_url.hpp"
#include "core/histogram.hpp"
#include "loadgen/merge.hpp"
#include "loadgen/readback.hpp"
#include "loadgen/setup.hpp"
#include "loadgen/result.hpp"
#include "oracle/history.hpp"
#include "pcap_builder.hpp"
#include "reference/server.hpp"
#include "reports/html.hpp"
#include "reports/load_terminal.hpp"
#include "reports/run_document.hpp"

namespace crh::capture::wire_timing_test {
namespace {

using core::ClientConnection;
using core::ClientExchange;
using loadgen::LoadResult;
using oracle::OpKind;
namespace json = boost::json;

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kMs = 1000 * kUs;
constexpr std::int64_t kT0 = 1'700'000'000 * std::int64_t{1'000'000'000};  // a wall-clock time, as captures have

// An exchange as the reader hands it out: wire latency = resp_last - req_last.
WireExchange exchange(std::uint64_t stream, std::uint16_t port, std::uint32_t sequence, std::int64_t req_first,
                      std::int64_t req_last, std::int64_t resp_last) {
  WireExchange x;
  x.stream = stream;
  x.sequence = sequence;
  x.client = {"127.0.0.1", port};
  x.server = {"127.0.0.1", 8080};
  x.request.method = "GET";
  x.request.target = "/api/v1/local-agents";
  x.response = core::HttpResponse{200, {}, "[]"};
  x.request_first = {req_first, 1};
  x.request_last = {req_last, 2};
  x.response_first = {resp_last, 3};
  x.response_last = {resp_last, 4};
  return x;
}

const core::WireOpStats& wire_of(const LoadResult& r, OpKind op) {
  return r.stats.ops[static_cast<std::size_t>(op)].wire;
}

core::Histogram histogram_of(std::initializer_list<std::int64_t> values) {
  core::Histogram h;
  for (auto v : values) h.record(v);
  return h;
}

// A client record of the engine (core::ClientExchange), its operation by kind.
ClientExchange record(std::uint64_t connection, std::uint32_t order, OpKind op, bool measured, std::int64_t latency_ns,
                      std::uint64_t offset = 0) {
  return {connection, order, static_cast<std::uint8_t>(op), measured, latency_ns, offset};
}

// The figures joined into the load's result, as the runner does (runners/load_session.cpp).
void join(LoadResult& r, WireFigures figures) {
  for (std::size_t i = 0; i < r.stats.ops.size(); ++i) r.stats.ops[i].wire = std::move(figures.ops[i]);
  r.wire = std::move(figures.summary);
}

// A WireTimer over a result's client records whose figures go back into it.
class ResultTimer {
 public:
  explicit ResultTimer(LoadResult& r) : result_(r), timer_(r.client_connections, r.client_exchanges) {}
  void add(const WireExchange& x) { timer_.add(x); }
  void finish(std::string file) { join(result_, timer_.finish(std::move(file))); }

 private:
  LoadResult& result_;
  WireTimer timer_;
};

// The capture read and paired with the result's records, joined into it; returns the run's figures.
core::WireSummary attach_wire_timing(const std::string& file, LoadResult& r) {
  join(r, wire_timing(file, r.client_connections, r.client_exchanges));
  return *r.wire;
}

TEST(WireTiming, PairsEachExchangeWithItsRequestAndRecordsWireLatencyAndOverhead) {
  LoadResult r;
  r.client_connections = {{1, 40000, kT0}, {2, 40001, kT0}};
  r.client_exchanges = {record(1, 0, OpKind::get, true, 500 * kUs), record(2, 0, OpKind::get, true, 900 * kUs),
                        record(1, 1, OpKind::get, true, 700 * kUs)};
  ResultTimer timer(r);
  timer.add(exchange(0, 40000, 0, kT0 + 10 * kUs, kT0 + 10 * kUs, kT0 + 310 * kUs));          // wire 300 us
  timer.add(exchange(1, 40001, 0, kT0 + 20 * kUs, kT0 + 20 * kUs, kT0 + 820 * kUs));          // wire 800 us
  timer.add(exchange(0, 40000, 1, kT0 + 2 * kMs, kT0 + 2 * kMs, kT0 + 2 * kMs + 400 * kUs));  // wire 400 us
  timer.finish("run.pcap");

  const auto& w = wire_of(r, OpKind::get);
  EXPECT_EQ(w.paired, 3u);
  EXPECT_EQ(w.unpaired, 0u);
  EXPECT_EQ(w.latency, histogram_of({300 * kUs, 800 * kUs, 400 * kUs}));
  EXPECT_EQ(w.overhead, histogram_of({200 * kUs, 100 * kUs, 300 * kUs}));
  EXPECT_EQ(w.client, histogram_of({500 * kUs, 900 * kUs, 700 * kUs}));
  ASSERT_TRUE(r.wire);
  EXPECT_EQ(r.wire->file, "run.pcap");
  EXPECT_EQ(r.wire->exchanges, 3u);
  EXPECT_EQ(r.wire->paired, 3u);
  EXPECT_EQ(r.wire->unpaired_client + r.wire->unpaired_wire + r.wire->incomplete, 0u);
}

// Two connections on one client port in turn are two streams; each pairs
// with the connection whose connect began last before its first request,
// and a stream of someone else (the setup's discovery) on that port in
// between pairs with neither.
TEST(WireTiming, TellsApartConnectionsThatReusedAPort) {
  LoadResult r;
  r.client_connections = {{7, 40000, kT0 + 10 * kMs}, {3, 40000, kT0}};  // not in time order on purpose
  r.client_exchanges = {record(3, 0, OpKind::tag, true, 1000 * kUs), record(7, 0, OpKind::tag, true, 2000 * kUs)};
  ResultTimer timer(r);
  timer.add(exchange(0, 40000, 0, kT0 + 1 * kMs, kT0 + 1 * kMs, kT0 + 1 * kMs + 600 * kUs));      // wire 600 us
  timer.add(exchange(1, 40000, 0, kT0 + 5 * kMs, kT0 + 5 * kMs, kT0 + 5 * kMs + 50 * kUs));       // not ours
  timer.add(exchange(2, 40000, 0, kT0 + 11 * kMs, kT0 + 11 * kMs, kT0 + 11 * kMs + 1500 * kUs));  // wire 1.5 ms
  timer.finish("f.pcap");

  const auto& w = wire_of(r, OpKind::tag);
  EXPECT_EQ(w.paired, 2u);
  EXPECT_EQ(w.latency, histogram_of({600 * kUs, 1500 * kUs}));
  EXPECT_EQ(w.overhead, histogram_of({400 * kUs, 500 * kUs}));
  EXPECT_EQ(r.wire->unpaired_wire, 1u);
  EXPECT_EQ(r.wire->unpaired_client, 0u);
}

TEST(WireTiming, CountsAnIncompleteExchangeWithoutJudgingIt) {
  LoadResult r;
  r.client_connections = {{1, 40000, kT0}};
  r.client_exchanges = {record(1, 0, OpKind::get, true, 500 * kUs), record(1, 1, OpKind::get, true, 500 * kUs)};
  ResultTimer timer(r);
  timer.add(exchange(0, 40000, 0, kT0 + kUs, kT0 + kUs, kT0 + 301 * kUs));
  auto cut = exchange(0, 40000, 1, kT0 + kMs, kT0 + kMs, kT0 + 2 * kMs);
  cut.complete = false;
  cut.incomplete = "gap of 1448 bytes before the response";
  timer.add(cut);
  timer.finish("f.pcap");

  const auto& w = wire_of(r, OpKind::get);
  EXPECT_EQ(w.incomplete, 1u);
  EXPECT_EQ(w.paired, 1u);
  EXPECT_EQ(w.unpaired, 0u);  // it was seen, only not whole
  EXPECT_EQ(w.latency, histogram_of({300 * kUs}));
  EXPECT_EQ(r.wire->incomplete, 1u);
}

TEST(WireTiming, CountsRequestsWithoutExchangeAndOnlyMeasuredOnesPerOperation) {
  LoadResult r;
  r.client_connections = {{1, 40000, kT0}};
  r.client_exchanges = {record(1, 0, OpKind::get, false, 500 * kUs),  // warm-up: paired, not in the figures
                        record(1, 1, OpKind::get, true, 500 * kUs),
                        record(1, 2, OpKind::get, true, 500 * kUs),    // the capture ended before it
                        record(1, 3, OpKind::get, false, 500 * kUs)};  // after the measured window, also lost
  ResultTimer timer(r);
  timer.add(exchange(0, 40000, 0, kT0 + kUs, kT0 + kUs, kT0 + 101 * kUs));
  timer.add(exchange(0, 40000, 1, kT0 + kMs, kT0 + kMs, kT0 + kMs + 200 * kUs));
  timer.finish("f.pcap");

  const auto& w = wire_of(r, OpKind::get);
  EXPECT_EQ(w.paired, 1u);
  EXPECT_EQ(w.latency, histogram_of({200 * kUs}));
  EXPECT_EQ(w.client, histogram_of({500 * kUs}));  // only the paired measured request, beside its wire time
  EXPECT_EQ(w.unpaired, 1u);
  EXPECT_EQ(r.wire->unpaired_client, 2u);
  EXPECT_EQ(r.wire->paired, 2u);
}

TEST(WireTiming, CountsANegativeOverheadApartInsteadOfClampingIt) {
  LoadResult r;
  r.client_connections = {{1, 40000, kT0}};
  r.client_exchanges = {record(1, 0, OpKind::call, true, 100 * kUs), record(1, 1, OpKind::call, true, 450 * kUs)};
  ResultTimer timer(r);
  timer.add(exchange(0, 40000, 0, kT0 + kUs, kT0 + kUs, kT0 + 301 * kUs));  // wire 300 > client 100
  timer.add(exchange(0, 40000, 1, kT0 + kMs, kT0 + kMs, kT0 + kMs + 400 * kUs));
  timer.finish("f.pcap");

  const auto& w = wire_of(r, OpKind::call);
  EXPECT_EQ(w.paired, 2u);
  EXPECT_EQ(w.negative_overhead, 1u);
  EXPECT_EQ(r.wire->negative_overhead, 1u);
  EXPECT_EQ(w.latency, histogram_of({300 * kUs, 400 * kUs}));
  EXPECT_EQ(w.overhead, histogram_of({50 * kUs}));  // no 0 for the negative one
}

TEST(WireTiming, ARequestTheClientGotNoAnswerForIsNotJudged) {
  LoadResult r;
  r.client_connections = {{1, 40000, kT0}};
  r.client_exchanges = {record(1, 0, OpKind::get, true, -1)};  // timed out at the client
  ResultTimer timer(r);
  timer.add(exchange(0, 40000, 0, kT0 + kUs, kT0 + kUs, kT0 + 301 * kUs));
  timer.finish("f.pcap");
  EXPECT_EQ(wire_of(r, OpKind::get).latency.count(), 0u);
  EXPECT_EQ(r.wire->unanswered, 1u);
}

// The same pairing through a capture file, as `crh load --capture` reads it.
TEST(WireTiming, ReadsACaptureFileAndPairsItsExchanges) {
  const auto path = (std::filesystem::temp_directory_path() / ("crh-wire-" + std::to_string(::getpid()) + ".pcap"));
  {
    testing::PcapBuilder b(testing::LinkKind::null, path.string());
    auto f = b.flow("127.0.0.1", 40000, "127.0.0.1", 8080);
    b.handshake(f, kT0 + 10 * kUs);
    b.send(f, testing::Dir::to_server, testing::http_request("GET", "/api/v1/local-agents"), kT0 + 100 * kUs);
    b.send(f, testing::Dir::to_client, testing::http_response(200, {}, "[]"), kT0 + 350 * kUs);
    b.send(f, testing::Dir::to_server, testing::http_request("GET", "/api/v1/local-agents"), kT0 + 1 * kMs);
    b.send(f, testing::Dir::to_client, testing::http_response(200, {}, "[]"), kT0 + 1 * kMs + 125 * kUs);
    b.fin(f, testing::Dir::to_server, kT0 + 2 * kMs);
    b.fin(f, testing::Dir::to_client, kT0 + 2 * kMs + kUs);
    b.close();
  }
  LoadResult r;
  r.client_connections = {{1, 40000, kT0}};
  const auto first_size = testing::http_request("GET", "/api/v1/local-agents").size();
  r.client_exchanges = {record(1, 0, OpKind::get, true, 300 * kUs, 0),
                        record(1, 1, OpKind::get, true, 200 * kUs, first_size)};
  const auto summary = attach_wire_timing(path.string(), r);
  std::filesystem::remove(path);
  EXPECT_EQ(summary.exchanges, 2u);
  EXPECT_EQ(summary.paired, 2u);
  const auto& w = wire_of(r, OpKind::get);
  EXPECT_EQ(w.latency, histogram_of({250 * kUs, 125 * kUs}));
  EXPECT_EQ(w.overhead, histogram_of({50 * kUs, 75 * kUs}));
}

// A capture that lost a whole request (and its answer) still pairs the
// requests after it with their own client records: by where each starts in
// the stream's bytes, not by counting exchanges, which would shift every
// later pair by one and time each request against its neighbour's answer.
TEST(WireTiming, ALostRequestDoesNotShiftThePairsAfterIt) {
  const auto path = (std::filesystem::temp_directory_path() / ("crh-wire-lost-" + std::to_string(::getpid()) + ".pcap"));
  const std::string one = testing::http_request("GET", "/api/v1/local-agents/101");
  const std::string two = testing::http_request("GET", "/api/v1/local-agents/102");
  const std::string three = testing::http_request("GET", "/api/v1/local-agents/103");
  const std::string answer = testing::http_response(200, {}, "{}");
  {
    testing::PcapBuilder b(testing::LinkKind::ethernet, path.string());
    auto f = b.flow("127.0.0.1", 40001, "127.0.0.1", 8080);
    b.handshake(f, kT0 + 10 * kUs);
    b.send(f, testing::Dir::to_server, one, kT0 + 100 * kUs);
    b.send(f, testing::Dir::to_client, answer, kT0 + 200 * kUs);  // wire 100 us
    b.skip(f, testing::Dir::to_server, static_cast<std::uint32_t>(two.size()));  // lost: request two
    b.skip(f, testing::Dir::to_client, static_cast<std::uint32_t>(answer.size()));  // and its answer
    b.send(f, testing::Dir::to_server, three, kT0 + 1 * kMs);
    b.send(f, testing::Dir::to_client, answer, kT0 + 1 * kMs + 400 * kUs);  // wire 400 us
    b.fin(f, testing::Dir::to_server, kT0 + 2 * kMs);
    b.fin(f, testing::Dir::to_client, kT0 + 2 * kMs + kUs);
    b.close();
  }
  LoadResult r;
  r.client_connections = {{1, 40001, kT0}};
  r.client_exchanges = {record(1, 0, OpKind::get, true, 150 * kUs, 0),
                        record(1, 1, OpKind::get, true, 900 * kUs, one.size()),
                        record(1, 2, OpKind::get, true, 430 * kUs, one.size() + two.size())};
  attach_wire_timing(path.string(), r);
  std::filesystem::remove(path);
  const auto& w = wire_of(r, OpKind::get);
  EXPECT_EQ(w.latency, histogram_of({100 * kUs, 400 * kUs}));
  EXPECT_EQ(w.overhead, histogram_of({50 * kUs, 30 * kUs}));  // by order, three would pair with two's 900 us
  EXPECT_EQ(w.negative_overhead, 0u);
  EXPECT_EQ(w.unpaired, 1u);  // request two: the capture never saw it
}

TEST(WireTiming, AnUnreadableCaptureIsACaptureFileError) {
  LoadResult r;
  EXPECT_THROW(attach_wire_timing("/nonexistent/crh-no-such.pcap", r), CaptureFileError);
}

// ---- the document: written, read back, merged across shards, rendered

loadgen::LoadConfig doc_config() {
  loadgen::LoadConfig c;
  std::string why;
  c.target.base = *core::parse_base_url("http://127.0.0.1:18080", why);
  c.scenario = loadgen::Scenario::get;
  return c;
}

// A shard whose get requests saw the given wire latencies, each 100 us below the client's.
LoadResult shard(std::initializer_list<std::int64_t> wire_us, std::uint16_t port) {
  LoadResult r;
  r.wall_s = 1;
  r.client_connections = {{1, port, kT0}};
  std::uint32_t order = 0;
  auto& op = r.stats.ops[static_cast<std::size_t>(OpKind::get)];
  for (auto us : wire_us) {
    op.latency[static_cast<std::size_t>(oracle::Outcome::ok)].record((us + 100) * kUs);
    op.uncorrected.record((us + 100) * kUs);
    ++op.statuses[200];
    r.client_exchanges.push_back(record(1, order, OpKind::get, true, (us + 100) * kUs));
    ++order;
  }
  ResultTimer t(r);  // indexes the records just added
  for (std::uint32_t i = 0; i < r.client_exchanges.size(); ++i) {
    const auto us = *(wire_us.begin() + i);
    t.add(exchange(0, port, i, kT0 + (i + 1) * kMs, kT0 + (i + 1) * kMs, kT0 + (i + 1) * kMs + us * kUs));
  }
  t.finish("shard-" + std::to_string(port) + ".pcap");
  return r;
}

json::object document_of(const LoadResult& r) {
  loadgen::RunInfo info;
  info.started = std::chrono::system_clock::from_time_t(1'700'000'000);
  return loadgen::result_document(doc_config(), r, {}, info);
}

TEST(WireTimingDocument, ReadsBackExactlyAndMergesShardsToTheUnion) {
  const auto a = shard({100, 300, 500}, 40000);
  const auto b = shard({200, 900}, 40001);
  const auto doc_a = document_of(a);
  ASSERT_TRUE(doc_a.at("operations").at("get").as_object().contains("wire")) << json::serialize(doc_a);
  ASSERT_TRUE(doc_a.contains("wire"));

  auto run_a = loadgen::read_load_document(doc_a);
  EXPECT_EQ(wire_of(run_a.result, OpKind::get).latency, wire_of(a, OpKind::get).latency);
  ASSERT_TRUE(run_a.result.wire);
  EXPECT_EQ(run_a.result.wire->paired, 3u);

  const auto merged = loadgen::merge_load_runs(run_a, loadgen::read_load_document(document_of(b)));
  const auto& w = wire_of(merged.result, OpKind::get);
  EXPECT_EQ(w.latency, histogram_of({100 * kUs, 300 * kUs, 500 * kUs, 200 * kUs, 900 * kUs}));
  EXPECT_EQ(w.overhead.count(), 5u);
  EXPECT_EQ(w.client, histogram_of({200 * kUs, 400 * kUs, 600 * kUs, 300 * kUs, 1000 * kUs}));
  EXPECT_EQ(w.paired, 5u);
  ASSERT_TRUE(merged.result.wire);
  EXPECT_EQ(merged.result.wire->exchanges, 5u);
  EXPECT_EQ(merged.result.wire->file, "shard-40000.pcap, shard-40001.pcap");

  // And again through the merged document, as `crh report a.json b.json` writes it.
  const auto again = loadgen::read_load_document(loadgen::result_document(merged));
  EXPECT_EQ(wire_of(again.result, OpKind::get).latency, w.latency);
}

TEST(WireTimingDocument, ADocumentWithoutACaptureHasNoWireSection) {
  LoadResult r;
  r.wall_s = 1;
  r.stats.ops[0].uncorrected.record(kMs);
  r.stats.ops[0].latency[0].record(kMs);
  const auto doc = document_of(r);
  EXPECT_FALSE(doc.contains("wire"));
  EXPECT_FALSE(doc.at("operations").at("get").as_object().contains("wire"));
  EXPECT_FALSE(loadgen::read_load_document(doc).result.wire);
}

TEST(WireTimingReport, TerminalShowsWireBesideClientAndTheOverhead) {
  const auto text = reports::load_summary(json::value(document_of(shard({100, 300, 500}, 40000))), {});
  EXPECT_NE(text.find("client p50"), std::string::npos) << text;
  EXPECT_NE(text.find("wire p50"), std::string::npos) << text;
  // The get row: 3 paired, client p50 400 us beside wire p50 300 us (of the same requests).
  const auto row = text.find("\n  get ");
  ASSERT_NE(row, std::string::npos) << text;
  const auto line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
  const auto client_at = line.find("400 µs"), wire_at = line.find("300 µs");
  EXPECT_TRUE(client_at != std::string::npos && wire_at != std::string::npos && client_at < wire_at) << line;
  EXPECT_NE(text.find("harness overhead (client − wire): p50 100 µs p99 100 µs"), std::string::npos) << text;
  EXPECT_NE(text.find("capture shard-40000.pcap"), std::string::npos) << text;

  const auto plain = reports::load_summary(json::value(document_of(LoadResult{})), {});
  EXPECT_EQ(plain.find("harness overhead"), std::string::npos) << plain;
}

TEST(WireTimingReport, HtmlShowsClientAndWireSideBySideAndTheOverheadCurve) {
  reports::RunParts parts;
  parts.loads.push_back(document_of(shard({100, 300, 500}, 40000)));
  reports::RunMeta meta;
  meta.started = std::chrono::system_clock::from_time_t(1'700'000'000);
  meta.base_url = "http://127.0.0.1:18080";
  meta.channel = "1";
  const auto html = reports::html_report(reports::run_document(parts, std::nullopt, meta));
  EXPECT_NE(html.find("<th class=\"n\">client p50</th><th class=\"n\">wire p50</th>"), std::string::npos);
  EXPECT_NE(html.find("Client and wire latency by percentile"), std::string::npos);
  EXPECT_NE(html.find("Harness overhead (client − wire) by percentile"), std::string::npos);
  EXPECT_NE(html.find("get wire"), std::string::npos);  // the wire curve's legend
}

// ---- a real load on loopback, captured by tcpdump

constexpr const char* kKey = "wire-timing-key-83d1";

// The engine's side: with the flag, one record per request written, on every
// path (the race's armed calls, the control connection's tags and untags);
// each connection's requests numbered 0, 1, 2, ... with no hole, as the
// stream's exchanges are; the measured ones are exactly what the figures count.
TEST(WireTimingRecords, TheEngineKeepsOneRecordPerRequestWrittenInOrderOnItsConnection) {
  reference::ServerConfig server;
  server.threads = 1;
  server.service.api_key = kKey;
  server.fixtures = reference::default_fixtures(2, 16);
  reference::Server service(std::move(server));
  service.start();
  loadgen::LoadConfig config;
  std::string why;
  config.target.base = *core::parse_base_url(service.base_url(), why);
  config.target.api_key = kKey;
  config.scenario = loadgen::Scenario::race;
  config.connections = 2;
  config.callers = 3;
  config.duration = std::chrono::milliseconds(300);
  config.keep_client_exchanges = true;
  loadgen::FoundState found;
  const auto discovery = loadgen::discover(config, found);
  loadgen::Progress progress;
  const auto r = loadgen::run_load(config, discovery, progress);
  loadgen::restore(config, found);

  ASSERT_GT(r.stats.race.rounds, 0u);
  std::map<std::uint64_t, std::vector<std::uint32_t>> orders;
  std::array<std::uint64_t, oracle::kOpKinds> measured{};
  for (const auto& x : r.client_exchanges) {
    orders[x.connection].push_back(x.order);
    measured[static_cast<std::size_t>(x.op)] += x.measured;
  }
  std::set<std::uint64_t> serials;
  for (const auto& c : r.client_connections) {
    EXPECT_NE(c.port, 0u);
    EXPECT_GT(c.connect_unix_ns, kT0);
    EXPECT_TRUE(serials.insert(c.serial).second) << "serial " << c.serial << " given twice";
  }
  for (auto& [serial, list] : orders) {
    EXPECT_TRUE(serials.count(serial)) << "a request on connection " << serial << ", which was never opened";
    std::sort(list.begin(), list.end());
    for (std::uint32_t i = 0; i < list.size(); ++i)
      ASSERT_EQ(list[i], i) << "connection " << serial << ": requests numbered with a hole or twice";
  }
  for (std::size_t op = 0; op < oracle::kOpKinds; ++op)
    EXPECT_EQ(measured[op], r.stats.ops[op].count()) << oracle::to_string(static_cast<OpKind>(op));
  EXPECT_GT(measured[static_cast<std::size_t>(OpKind::recall)], 0u);
  EXPECT_GT(measured[static_cast<std::size_t>(OpKind::untag)], 0u);
}

TEST(WireTimingRecords, WithoutTheFlagTheEngineKeepsNone) {
  reference::ServerConfig server;
  server.threads = 1;
  server.service.api_key = kKey;
  reference::Server service(std::move(server));
  service.start();
  loadgen::LoadConfig config;
  std::string why;
  config.target.base = *core::parse_base_url(service.base_url(), why);
  config.target.api_key = kKey;
  config.scenario = loadgen::Scenario::get;
  config.connections = 1;
  config.duration = std::chrono::milliseconds(50);
  loadgen::Progress progress;
  const auto r = loadgen::run_load(config, {}, progress);
  EXPECT_GT(r.stats.ops[0].count(), 0u);
  EXPECT_TRUE(r.client_exchanges.empty());
  EXPECT_TRUE(r.client_connections.empty());
}

bool on_path(const char* tool) {
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// tcpdump writing `file`, started and known to be listening.
class Tcpdump {
 public:
  Tcpdump(const std::string& file, std::uint16_t port) {
    int err[2];
    if (::pipe(err) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(err[1], 2);
      ::close(err[0]);
      const std::string filter = "tcp port " + std::to_string(port);
      ::execlp("tcpdump", "tcpdump", "-i", "lo", "-U", "-B", "16384", "-w", file.c_str(), filter.c_str(),
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(err[1]);
    // tcpdump says "listening on lo" once its filter is in place; bounded: at
    // most 300 polls, and an exit (EOF) ends it at once.
    char buf[512];
    for (int i = 0; i < 300 && !listening_; ++i) {
      pollfd p{err[0], POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const auto n = ::read(err[0], buf, sizeof buf);
      if (n <= 0) break;
      said_.append(buf, static_cast<std::size_t>(n));
      listening_ = said_.find("listening on") != std::string::npos;
    }
    err_ = err[0];
  }
  ~Tcpdump() { stop(); }
  bool listening() const { return listening_; }
  const std::string& said() const { return said_; }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGINT);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    char buf[512];  // its closing words: packets captured, received, dropped by the kernel
    for (ssize_t n; err_ >= 0 && (n = ::read(err_, buf, sizeof buf)) > 0;)
      said_.append(buf, static_cast<std::size_t>(n));
    if (err_ >= 0) ::close(err_);
    err_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int err_ = -1;
  bool listening_ = false;
  std::string said_;
};

// tcpdump stops at SIGINT without draining what the kernel still holds: send
// a marker to the port after the load and stop it once the marker is in the
// file (it writes packets in order, -U: each as it comes), so nothing of the
// load is left behind. Bounded: at most 500 looks.
bool drain(const std::string& file, std::uint16_t port) {
  const std::string marker = "crh-wire-timing-marker-" + std::to_string(::getpid());
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool sent = ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0 &&
                    ::write(fd, marker.data(), marker.size()) == static_cast<ssize_t>(marker.size());
  bool seen = false;
  for (int i = 0; sent && !seen && i < 500; ++i) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    seen = bytes.find(marker) != std::string::npos;
    if (!seen) ::poll(nullptr, 0, 10);
  }
  ::close(fd);
  return seen;
}

// A load of `scenario` on the in-process reference service, captured by
// tcpdump on lo, its capture paired with it. Empty when skipped.
std::optional<LoadResult> captured_load(loadgen::Scenario scenario) {
  reference::ServerConfig server;
  server.threads = 1;
  server.service.api_key = kKey;
  server.fixtures = reference::default_fixtures(2, 16);
  reference::Server service(std::move(server));
  service.start();
  loadgen::LoadConfig config;
  std::string why;
  config.target.base = *core::parse_base_url(service.base_url(), why);
  config.target.api_key = kKey;
  config.scenario = scenario;
  config.connections = 2;
  config.callers = 3;
  config.duration = std::chrono::milliseconds(300);
  config.keep_client_exchanges = true;
  loadgen::FoundState found;
  const auto discovery = loadgen::discover(config, found);

  const auto port = static_cast<std::uint16_t>(std::stoi(config.target.base.port));
  const auto file = (std::filesystem::temp_directory_path() /
                     ("crh-wire-live-" + std::to_string(::getpid()) + "-" + std::string(to_string(scenario)) + ".pcap"))
                        .string();
  Tcpdump tcpdump(file, port);
  EXPECT_TRUE(tcpdump.listening()) << "tcpdump did not start listening; it said: " << tcpdump.said();
  if (!tcpdump.listening()) return std::nullopt;
  loadgen::Progress progress;
  auto r = loadgen::run_load(config, discovery, progress);
  EXPECT_TRUE(drain(file, port)) << "the marker sent after the load never reached " << file;
  tcpdump.stop();
  loadgen::restore(config, found);
  service.stop();

  EXPECT_FALSE(r.client_connections.empty());
  const auto summary = attach_wire_timing(file, r);
  std::filesystem::remove(file);
  EXPECT_EQ(summary.negative_overhead, 0u);
  EXPECT_EQ(summary.unpaired_client, 0u) << "capture: " << summary.exchanges << " exchanges, " << summary.paired
                                         << " paired, " << summary.incomplete << " incomplete, "
                                         << summary.unpaired_wire
                                         << " without a request; tcpdump said: " << tcpdump.said();
  return r;
}

// Every measured request of `op` paired, with its overhead, and the wire
// faster than the client at the median.
void expect_all_paired(const LoadResult& r, OpKind op_kind) {
  const auto& op = r.stats.ops[static_cast<std::size_t>(op_kind)];
  const auto& w = op.wire;
  const auto name = oracle::to_string(op_kind);
  ASSERT_GT(op.count(), 0u) << name;
  EXPECT_EQ(w.paired, op.count()) << name << ": measured requests " << op.count() << ", paired " << w.paired
                                  << ", unpaired " << w.unpaired << ", incomplete " << w.incomplete;
  EXPECT_EQ(w.unpaired, 0u) << name;
  EXPECT_EQ(w.negative_overhead, 0u) << name;
  EXPECT_EQ(w.overhead.count(), w.paired) << name;
  EXPECT_LE(w.latency.quantile(0.5), w.client.quantile(0.5)) << name;
}

TEST(WireTimingLive, EveryMeasuredRequestOfALoopbackGetLoadPairsAndWireIsBelowClient) {
  if (::geteuid() != 0) GTEST_SKIP() << "capturing on lo needs root (or CAP_NET_RAW)";
  if (!on_path("tcpdump")) GTEST_SKIP() << "tcpdump is not installed";
  const auto r = captured_load(loadgen::Scenario::get);
  ASSERT_TRUE(r);
  expect_all_paired(*r, OpKind::get);
}

// The race writes its calls in two parts on pre-opened connections and tags
// and untags on a control connection: every one of them pairs too.
TEST(WireTimingLive, EveryMeasuredRequestOfALoopbackRacePairs) {
  if (::geteuid() != 0) GTEST_SKIP() << "capturing on lo needs root (or CAP_NET_RAW)";
  if (!on_path("tcpdump")) GTEST_SKIP() << "tcpdump is not installed";
  const auto r = captured_load(loadgen::Scenario::race);
  ASSERT_TRUE(r);
  for (auto op : {OpKind::tag, OpKind::call, OpKind::recall, OpKind::untag}) expect_all_paired(*r, op);
}

}  // namespace
}  // namespace crh::capture::wire_timing_test
