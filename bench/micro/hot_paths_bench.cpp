// Micro-benchmarks of the load generator's per-operation hot paths: latency
// histogram record/quantile/merge, building and serializing a race call,
// reading a typical response (Content-Length and chunked) and request (the
// request reader wire capture will use), and the history's JSON lines. Run
// by `make bench` from a Release build (build-bench/); numbers from a Debug
// or sanitizer build mean nothing.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

#include "core/base_url.hpp"
#include "core/histogram.hpp"
#include "core/http.hpp"
#include "core/http1.hpp"
#include "core/target.hpp"
#include "loadgen/history.hpp"

namespace {

using crh::core::Histogram;

// Latencies log-uniform in [10 us, 100 ms], fixed seed: the same set every run.
std::vector<std::int64_t> latencies(std::size_t n, std::uint64_t seed = 42) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(std::log(10'000.0), std::log(100'000'000.0));
  std::vector<std::int64_t> out(n);
  for (auto& v : out) v = static_cast<std::int64_t>(std::exp(exponent(rng)));
  return out;
}

Histogram filled(std::size_t samples, std::uint64_t seed) {
  Histogram h;
  for (auto v : latencies(samples, seed)) h.record(v);
  return h;
}

// ---- core::Histogram ----------------------------------------------------

void BM_HistogramRecord(benchmark::State& state) {
  const auto values = latencies(1 << 16);  // power of two: index by mask
  const std::size_t mask = values.size() - 1;
  Histogram h;
  h.record(100'000'000);  // grow the buckets once, outside the timed loop
  std::size_t i = 0;
  for (auto _ : state) {
    h.record(values[i++ & mask]);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramRecord);

void BM_HistogramQuantile(benchmark::State& state) {
  const Histogram h = filled(1'000'000, 1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&h);
    std::int64_t p99 = h.quantile(0.99);
    benchmark::DoNotOptimize(p99);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramQuantile);

void BM_HistogramMerge(benchmark::State& state) {
  const Histogram src = filled(1'000'000, 2);
  Histogram dst = filled(1'000'000, 3);
  dst.merge(src);  // same bucket range from here on: no growth in the loop
  for (auto _ : state) {
    dst.merge(src);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(dst.count());
  state.SetItemsProcessed(state.iterations());  // merges
}
BENCHMARK(BM_HistogramMerge);

// ---- request bytes ------------------------------------------------------

void BM_RequestBuild(benchmark::State& state) {
  std::string why;
  const auto base = crh::core::parse_base_url("http://127.0.0.1:8080", why);
  if (!base) {
    state.SkipWithError(why.c_str());
    return;
  }
  const crh::core::CallHook hook;  // POST /channels/{channel}/alias-numbers/{alias}/calls, "caller"
  const std::string api_key = "0123456789abcdef0123456789abcdef";
  const std::string channel = "1", alias = "7", caller = "+15550001234";
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto request = crh::core::build_request(hook.method, hook.path_for(channel, alias), {{hook.parameter, caller}},
                                            crh::core::ParamEncoding::form);
    std::string wire = crh::core::http1::serialize_request(request, *base, api_key);
    bytes += wire.size();
    benchmark::DoNotOptimize(wire.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_RequestBuild);

// ---- response reader ----------------------------------------------------

// 120 bytes of JSON, the size of a typical call answer.
const std::string& json_body() {
  static const std::string body = [] {
    std::string b =
        R"({"alias_number":"7","caller":"+15550001234","agent":"agent-03","channel":"1","routed":true,"note":")";
    const std::string tail = R"("})";
    b.append(120 - b.size() - tail.size(), 'x');
    return b + tail;
  }();
  return body;
}

// Status 200 and six headers as nginx sends them; one of them frames the body.
std::string response_head(std::string_view framing) {
  return std::string(
             "HTTP/1.1 200 OK\r\n"
             "Server: nginx/1.22.1\r\n"
             "Date: Mon, 06 May 2024 12:00:00 GMT\r\n"
             "Content-Type: application/json\r\n") +
         std::string(framing) +
         "\r\n"
         "Connection: keep-alive\r\n"
         "Cache-Control: no-store\r\n"
         "\r\n";
}

std::string plain_response() {
  return response_head("Content-Length: " + std::to_string(json_body().size())) + json_body();
}

std::string chunked_response() {
  const std::string& b = json_body();
  std::string out = response_head("Transfer-Encoding: chunked");
  const std::size_t third = b.size() / 3;
  for (std::size_t off = 0; off < b.size(); off += third) {
    const std::size_t n = std::min(third, b.size() - off);
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", n);
    out += size;
    out.append(b, off, n);
    out += "\r\n";
  }
  return out + "0\r\n\r\n";
}

void parse(benchmark::State& state, const std::string& response) {
  const bool keep_body = state.range(0) != 0;
  crh::core::http1::ResponseReader reader;
  for (auto _ : state) {
    reader.reset(keep_body);
    std::size_t used = reader.feed(response);
    benchmark::DoNotOptimize(used);
    if (reader.state() != crh::core::http1::State::done || reader.status() != 200 || used != response.size())
        [[unlikely]] {
      state.SkipWithError("the reader did not read the whole response");
      break;
    }
    benchmark::DoNotOptimize(reader.body().data());
    benchmark::ClobberMemory();
  }
  if (keep_body && reader.body() != json_body()) state.SkipWithError("wrong body");
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(response.size()));
}

void BM_ResponseParse(benchmark::State& state) { parse(state, plain_response()); }
BENCHMARK(BM_ResponseParse)->ArgName("keep_body")->Arg(0)->Arg(1);

void BM_ResponseParseChunked(benchmark::State& state) { parse(state, chunked_response()); }
BENCHMARK(BM_ResponseParseChunked)->ArgName("keep_body")->Arg(0)->Arg(1);

// ---- request reader -----------------------------------------------------

// The race's call as the load path sends it, read back as a capture would:
// with its headers kept or not.
void BM_RequestParse(benchmark::State& state) {
  std::string why;
  const auto base = crh::core::parse_base_url("http://127.0.0.1:8080", why);
  if (!base) {
    state.SkipWithError(why.c_str());
    return;
  }
  const crh::core::CallHook hook;
  const auto call = crh::core::build_request(hook.method, hook.path_for("1", "7"), {{hook.parameter, "+15550001234"}},
                                             crh::core::ParamEncoding::form);
  const std::string request = crh::core::http1::serialize_request(call, *base, "0123456789abcdef0123456789abcdef");
  const auto capture = state.range(0) != 0 ? crh::core::http1::HeaderCapture::on : crh::core::http1::HeaderCapture::off;
  crh::core::http1::RequestReader reader({}, capture);
  for (auto _ : state) {
    reader.reset(true);
    std::size_t used = reader.feed(request);
    benchmark::DoNotOptimize(used);
    if (reader.state() != crh::core::http1::State::done || used != request.size()) [[unlikely]] {
      state.SkipWithError("the reader did not read the whole request");
      break;
    }
    benchmark::DoNotOptimize(reader.body().data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(request.size()));
}
BENCHMARK(BM_RequestParse)->ArgName("capture")->Arg(0)->Arg(1);

// ---- operation history --------------------------------------------------

crh::oracle::Op call_op(std::uint64_t round) {
  crh::oracle::Op op;
  op.round = round;
  op.kind = crh::oracle::OpKind::call;
  op.alias = "7";
  op.caller = "+15550001234";
  op.invoke_ns = 12'345'678'901;
  op.complete_ns = 12'346'912'345;
  op.outcome = crh::oracle::Outcome::ok;
  op.status = 200;
  return op;
}

void BM_HistoryAppend(benchmark::State& state) {
  const auto op = call_op(4242);
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string line = crh::oracle::to_json_line(op);
    bytes += line.size();
    benchmark::DoNotOptimize(line.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_HistoryAppend);

// HistoryWriter::write of 512-op batches to a real file under /tmp. Every 64
// batches (~5 MB) the file is reopened, untimed, so a long run stays small.
void BM_HistoryWriterWrite(benchmark::State& state) {
  constexpr std::size_t kBatch = 512;
  constexpr std::int64_t kBatchesPerFile = 64;
  const std::string path = "/tmp/crh_micro_bench_history_" + std::to_string(::getpid()) + ".jsonl";
  std::vector<crh::oracle::Op> ops;
  ops.reserve(kBatch);
  for (std::size_t i = 0; i < kBatch; ++i) {
    ops.push_back(call_op(i / 8 + 1));
    ops.back().caller = "+1555000" + std::to_string(1000 + i % 8);
    ops.back().invoke_ns += static_cast<std::int64_t>(i) * 1000;
    ops.back().complete_ns += static_cast<std::int64_t>(i) * 1000;
  }
  std::error_code ec;
  try {
    auto writer = std::make_unique<crh::loadgen::HistoryWriter>();
    writer->open(path);
    std::int64_t batches = 0;
    for (auto _ : state) {
      writer->write(ops);
      if (++batches % kBatchesPerFile == 0) {
        state.PauseTiming();
        writer->close();
        writer = std::make_unique<crh::loadgen::HistoryWriter>();
        writer->open(path);  // truncates
        state.ResumeTiming();
      }
    }
    benchmark::DoNotOptimize(writer->written());
    writer->close();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  std::filesystem::remove(path, ec);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kBatch));  // ops
}
BENCHMARK(BM_HistoryWriterWrite);

}  // namespace
