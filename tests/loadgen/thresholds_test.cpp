// The k6-style threshold grammar of `crh load`: parsing, error messages,
// comparisons at the boundary and the lines people read.
#include "loadgen/thresholds.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>

namespace crh::loadgen {
namespace {

constexpr double ms = 1e6;  // nanoseconds

// The message of the std::invalid_argument thrown for `text`, or a note that none was.
std::string error_of(std::string_view text) {
  try {
    auto t = parse_threshold(text);
    return "<no error: parsed as " + t.subject + "." + t.statistic + ">";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

void expect_error(std::string_view text, std::initializer_list<std::string_view> words) {
  std::string message = error_of(text);
  EXPECT_NE(message.find("threshold \"" + std::string(text) + "\""), std::string::npos)
      << "message does not quote the expression: " << message;
  for (auto w : words)
    EXPECT_NE(message.find(w), std::string::npos) << "missing \"" << w << "\" in: " << message;
}

TEST(Thresholds, ParsesLatencyWithUnits) {
  auto a = parse_threshold("call.p99<20ms");
  EXPECT_EQ(a.subject, "call");
  EXPECT_EQ(a.statistic, "p99");
  EXPECT_EQ(a.comparator, Comparator::less);
  EXPECT_EQ(a.quantity, Quantity::latency_ns);
  EXPECT_EQ(a.limit, 20 * ms);

  auto b = parse_threshold("tag.p50<5ms");
  EXPECT_EQ(b.subject, "tag");
  EXPECT_EQ(b.statistic, "p50");
  EXPECT_EQ(b.limit, 5 * ms);

  auto c = parse_threshold("call.p99.9 <= 250us");
  EXPECT_EQ(c.subject, "call");
  EXPECT_EQ(c.statistic, "p99.9");
  EXPECT_EQ(c.comparator, Comparator::less_equal);
  EXPECT_EQ(c.quantity, Quantity::latency_ns);
  EXPECT_EQ(c.limit, 250'000);

  EXPECT_EQ(parse_threshold("get.max<800ns").limit, 800);
  EXPECT_EQ(parse_threshold("get.max<3\xC2\xB5s").limit, 3'000);  // U+00B5 micro sign
  EXPECT_EQ(parse_threshold("get.max<3\xCE\xBCs").limit, 3'000);  // U+03BC Greek mu
  EXPECT_EQ(parse_threshold("get.max<1.5s").limit, 1.5e9);
  EXPECT_EQ(parse_threshold("get.max < 2 ms").limit, 2 * ms);
}

TEST(Thresholds, LatencyWithoutUnitMeansMilliseconds) {
  auto t = parse_threshold("call.mean<2");
  EXPECT_EQ(t.subject, "call");
  EXPECT_EQ(t.statistic, "mean");
  EXPECT_EQ(t.quantity, Quantity::latency_ns);
  EXPECT_EQ(t.limit, 2 * ms);
}

TEST(Thresholds, AcceptsP999AsSpellingOfP99Point9) {
  auto t = parse_threshold("call.p999<1ms");
  EXPECT_EQ(t.subject, "call");
  EXPECT_EQ(t.statistic, "p99.9");
}

TEST(Thresholds, ParsesEveryLatencyStatistic) {
  for (std::string s : {"p50", "p90", "p95", "p99", "p99.9", "max", "mean", "min"}) {
    auto t = parse_threshold("db-write." + s + "<7ms");
    EXPECT_EQ(t.statistic, s);
    EXPECT_EQ(t.subject, "db-write");
    EXPECT_EQ(t.quantity, Quantity::latency_ns) << s;
  }
}

TEST(Thresholds, SubjectMayHoldLettersDigitsDashesAndUnderscores) {
  EXPECT_EQ(parse_threshold("list-agents.p95<10ms").subject, "list-agents");
  EXPECT_EQ(parse_threshold("db_write2.p95<10ms").subject, "db_write2");
  EXPECT_EQ(parse_threshold("recall.p90<10ms").subject, "recall");
}

TEST(Thresholds, ParsesErrorSharesAsFractions) {
  auto a = parse_threshold("errors<0.1%");
  EXPECT_EQ(a.subject, "");
  EXPECT_EQ(a.statistic, "errors");
  EXPECT_EQ(a.comparator, Comparator::less);
  EXPECT_EQ(a.quantity, Quantity::fraction);
  EXPECT_DOUBLE_EQ(a.limit, 0.001);

  auto b = parse_threshold("delete.errors<1%");
  EXPECT_EQ(b.subject, "delete");
  EXPECT_EQ(b.statistic, "errors");
  EXPECT_EQ(b.quantity, Quantity::fraction);
  EXPECT_DOUBLE_EQ(b.limit, 0.01);

  auto c = parse_threshold("indeterminate<=2.5%");
  EXPECT_EQ(c.statistic, "indeterminate");
  EXPECT_EQ(c.quantity, Quantity::fraction);
  EXPECT_DOUBLE_EQ(c.limit, 0.025);
}

TEST(Thresholds, ParsesErrorAndIndeterminateCounts) {
  auto a = parse_threshold("errors<5");
  EXPECT_EQ(a.statistic, "errors");
  EXPECT_EQ(a.quantity, Quantity::count);
  EXPECT_EQ(a.limit, 5);

  auto b = parse_threshold("indeterminate==0");
  EXPECT_EQ(b.subject, "");
  EXPECT_EQ(b.statistic, "indeterminate");
  EXPECT_EQ(b.comparator, Comparator::equal);
  EXPECT_EQ(b.quantity, Quantity::count);
  EXPECT_EQ(b.limit, 0);

  auto c = parse_threshold("call.indeterminate<3");
  EXPECT_EQ(c.subject, "call");
  EXPECT_EQ(c.quantity, Quantity::count);
  EXPECT_EQ(c.limit, 3);
}

TEST(Thresholds, ParsesRunCounts) {
  auto a = parse_threshold("violations==0");
  EXPECT_EQ(a.subject, "");
  EXPECT_EQ(a.statistic, "violations");
  EXPECT_EQ(a.comparator, Comparator::equal);
  EXPECT_EQ(a.quantity, Quantity::count);
  EXPECT_EQ(a.limit, 0);

  auto b = parse_threshold("requests>=10000");
  EXPECT_EQ(b.statistic, "requests");
  EXPECT_EQ(b.comparator, Comparator::greater_equal);
  EXPECT_EQ(b.limit, 10000);

  auto c = parse_threshold("rounds > 50");
  EXPECT_EQ(c.statistic, "rounds");
  EXPECT_EQ(c.comparator, Comparator::greater);
  EXPECT_EQ(c.quantity, Quantity::count);
  EXPECT_EQ(c.limit, 50);
}

TEST(Thresholds, ParsesThroughput) {
  auto a = parse_threshold("get.rps>=1000");
  EXPECT_EQ(a.subject, "get");
  EXPECT_EQ(a.statistic, "rps");
  EXPECT_EQ(a.comparator, Comparator::greater_equal);
  EXPECT_EQ(a.quantity, Quantity::per_second);
  EXPECT_EQ(a.limit, 1000);

  auto b = parse_threshold("rps > 500/s");
  EXPECT_EQ(b.subject, "");
  EXPECT_EQ(b.statistic, "rps");
  EXPECT_EQ(b.comparator, Comparator::greater);
  EXPECT_EQ(b.quantity, Quantity::per_second);
  EXPECT_EQ(b.limit, 500);
}

TEST(Thresholds, ParsesEveryComparator) {
  EXPECT_EQ(parse_threshold("requests<1").comparator, Comparator::less);
  EXPECT_EQ(parse_threshold("requests<=1").comparator, Comparator::less_equal);
  EXPECT_EQ(parse_threshold("requests>1").comparator, Comparator::greater);
  EXPECT_EQ(parse_threshold("requests>=1").comparator, Comparator::greater_equal);
  EXPECT_EQ(parse_threshold("requests==1").comparator, Comparator::equal);
  EXPECT_EQ(parse_threshold("requests!=1").comparator, Comparator::not_equal);
  EXPECT_EQ(comparator_symbol(Comparator::less_equal), "<=");
  EXPECT_EQ(comparator_symbol(Comparator::not_equal), "!=");
}

TEST(Thresholds, KeepsTheTextForMessages) {
  EXPECT_EQ(parse_threshold("call.p99.9 <= 250us").text, "call.p99.9 <= 250us");
  EXPECT_EQ(parse_threshold("  rps > 500/s ").text, "rps > 500/s");
}

TEST(Thresholds, RejectsEmpty) {
  expect_error("", {"empty"});
  EXPECT_THROW(parse_threshold("   "), std::invalid_argument);
}

TEST(Thresholds, RejectsMissingOperator) {
  expect_error("call.p99 20ms", {"no comparison operator", "<=", "!="});
}

TEST(Thresholds, RejectsUnknownOperator) {
  expect_error("call.p99=<20ms", {"unknown operator", "\"=<\""});
  expect_error("call.p99=20ms", {"unknown operator", "\"=\""});
  expect_error("call.p99<<20ms", {"unknown operator"});
}

TEST(Thresholds, RejectsMissingStatistic) {
  expect_error("<20ms", {"expected a statistic"});
}

TEST(Thresholds, RejectsUnknownStatisticListingKnownOnes) {
  expect_error("call.p42<20ms", {"unknown statistic", "\"p42\"", "p50", "p99.9", "mean", "errors",
                                 "violations", "rounds", "rps"});
  expect_error("latency<20ms", {"unknown statistic", "\"latency\""});
}

TEST(Thresholds, RejectsLatencyWithoutSubject) {
  expect_error("p99<20ms", {"p99 needs an operation", "call.p99"});
  expect_error("p99.9<20ms", {"p99.9 needs an operation"});
  expect_error("mean<2", {"mean needs an operation"});
}

TEST(Thresholds, RejectsSubjectOnRunCounts) {
  expect_error("call.violations==0", {"violations", "whole run", "\"call\""});
  expect_error("call.requests>5", {"requests", "whole run"});
  expect_error("call.rounds>5", {"rounds", "whole run"});
}

TEST(Thresholds, RejectsInvalidSubject) {
  expect_error(".p99<20ms", {"empty operation name"});
  expect_error("ca ll.p99<20ms", {"invalid operation name", "\"ca ll\""});
  expect_error("a/b.p99<20ms", {"invalid operation name"});
}

TEST(Thresholds, RejectsPercentOnLatency) {
  expect_error("call.p99<5%", {"latency", "percent", "ms"});
}

TEST(Thresholds, RejectsUnitOnCount) {
  expect_error("violations==0ms", {"violations is a count", "no unit", "\"ms\""});
  expect_error("rounds>5%", {"rounds is a count", "no unit", "\"%\""});
}

TEST(Thresholds, RejectsUnknownUnit) {
  expect_error("call.p99<20xs", {"unknown unit \"xs\"", "expected ns, us, ms or s"});
  expect_error("errors<5ms", {"unknown unit \"ms\"", "%"});
  expect_error("rps>5/min", {"unknown unit \"/min\"", "/s"});
}

TEST(Thresholds, RejectsNonNumber) {
  expect_error("call.p99<fast", {"expected a number", "\"fast\""});
  expect_error("call.p99<", {"expected a number", "nothing"});
  expect_error("errors<.5%", {"expected a number"});
}

TEST(Thresholds, RejectsNegativeNumber) {
  expect_error("rps>-5", {"negative", "\"-5\""});
  expect_error("call.p99 < -1ms", {"negative"});
}

TEST(Thresholds, RejectsTrailingGarbage) {
  expect_error("call.p99<20ms foo", {"trailing", "\"foo\""});
  expect_error("call.p99<20ms5", {"trailing", "\"5\""});
  expect_error("violations==0 1", {"trailing", "\"1\""});
  expect_error("errors<1.2.3%", {"trailing"});
}

TEST(Thresholds, RejectsShareAboveHundredPercent) {
  expect_error("errors<150%", {"100%"});
  EXPECT_EQ(parse_threshold("errors<=100%").limit, 1.0);
}

TEST(Thresholds, HoldsForEveryComparator) {
  auto check = [](std::string_view text, double actual) { return holds(parse_threshold(text), actual); };
  EXPECT_TRUE(check("requests<10", 9));
  EXPECT_FALSE(check("requests<10", 11));
  EXPECT_TRUE(check("requests<=10", 9));
  EXPECT_FALSE(check("requests<=10", 11));
  EXPECT_TRUE(check("requests>10", 11));
  EXPECT_FALSE(check("requests>10", 9));
  EXPECT_TRUE(check("requests>=10", 11));
  EXPECT_FALSE(check("requests>=10", 9));
  EXPECT_TRUE(check("requests==10", 10));
  EXPECT_FALSE(check("requests==10", 11));
  EXPECT_TRUE(check("requests!=10", 11));
  EXPECT_FALSE(check("requests!=10", 10));
}

TEST(Thresholds, HoldsAtTheBoundaryOnlyForInclusiveComparators) {
  const double p99 = 20 * ms;
  EXPECT_FALSE(holds(parse_threshold("call.p99<20ms"), p99));
  EXPECT_TRUE(holds(parse_threshold("call.p99<=20ms"), p99));
  EXPECT_FALSE(holds(parse_threshold("call.p99>20ms"), p99));
  EXPECT_TRUE(holds(parse_threshold("call.p99>=20ms"), p99));
  EXPECT_TRUE(holds(parse_threshold("call.p99==20ms"), p99));
  EXPECT_FALSE(holds(parse_threshold("call.p99!=20ms"), p99));
}

TEST(Thresholds, DecimalLimitsEqualTheMeasuredValue) {
  // 1 error in 1000 requests is exactly at "0.1%"; 0.1 ms is exactly 100000 ns.
  EXPECT_TRUE(holds(parse_threshold("errors<=0.1%"), 1.0 / 1000));
  EXPECT_FALSE(holds(parse_threshold("errors<0.1%"), 1.0 / 1000));
  EXPECT_TRUE(holds(parse_threshold("errors==0.7%"), 7.0 / 1000));
  EXPECT_TRUE(holds(parse_threshold("call.p99<=0.1ms"), 100'000));
  EXPECT_TRUE(holds(parse_threshold("call.p99==0.3s"), 300'000'000));
}

TEST(Thresholds, MissingMeasurementNeverHolds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(holds(parse_threshold("requests!=0"), nan));
  EXPECT_FALSE(holds(parse_threshold("call.p99<20ms"), nan));
}

TEST(Thresholds, FormatsLatencies) {
  EXPECT_EQ(format_quantity(Quantity::latency_ns, 31.2 * ms), "31.2 ms");
  EXPECT_EQ(format_quantity(Quantity::latency_ns, 20 * ms), "20 ms");
  EXPECT_EQ(format_quantity(Quantity::latency_ns, 812'000), "812 us");
  EXPECT_EQ(format_quantity(Quantity::latency_ns, 812'400), "812 us");
  EXPECT_EQ(format_quantity(Quantity::latency_ns, 1.5e9), "1.50 s");
  EXPECT_EQ(format_quantity(Quantity::latency_ns, 2.345 * ms), "2.35 ms");
  EXPECT_EQ(format_quantity(Quantity::latency_ns, 450), "450 ns");
  EXPECT_EQ(format_quantity(Quantity::latency_ns, 999'700), "1.00 ms");
}

TEST(Thresholds, FormatsSharesCountsAndRates) {
  EXPECT_EQ(format_quantity(Quantity::fraction, 0.0002), "0.02%");
  EXPECT_EQ(format_quantity(Quantity::fraction, 0.001), "0.1%");
  EXPECT_EQ(format_quantity(Quantity::fraction, 0.07), "7%");
  EXPECT_EQ(format_quantity(Quantity::fraction, 1.0 / 3), "33.3%");
  EXPECT_EQ(format_quantity(Quantity::fraction, 0), "0%");
  EXPECT_EQ(format_quantity(Quantity::count, 12), "12");
  EXPECT_EQ(format_quantity(Quantity::count, 123456), "123456");
  EXPECT_EQ(format_quantity(Quantity::per_second, 1520), "1520/s");
  EXPECT_EQ(format_quantity(Quantity::per_second, 1520.7), "1521/s");
  EXPECT_EQ(format_quantity(Quantity::per_second, 12.345), "12.3/s");
}

TEST(Thresholds, DescribesHeldAndBreached) {
  EXPECT_EQ(describe(parse_threshold("call.p99<20ms"), 31.2 * ms, false),
            "call.p99<20ms: 31.2 ms (limit 20 ms) BREACHED");
  EXPECT_EQ(describe(parse_threshold("errors<0.1%"), 0.0002, true), "errors<0.1%: 0.02% (limit 0.1%) held");
  EXPECT_EQ(describe(parse_threshold("call.p99.9 <= 250us"), 812'000, false),
            "call.p99.9 <= 250us: 812 us (limit 250 us) BREACHED");
  EXPECT_EQ(describe(parse_threshold("get.max<2s"), 1.5e9, true), "get.max<2s: 1.50 s (limit 2 s) held");
  EXPECT_EQ(describe(parse_threshold("violations==0"), 12, false), "violations==0: 12 (limit 0) BREACHED");
  EXPECT_EQ(describe(parse_threshold("rps > 500/s"), 1520, true), "rps > 500/s: 1520/s (limit 500/s) held");
}

}  // namespace
}  // namespace crh::loadgen
