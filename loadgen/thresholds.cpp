// Parsing, checking and printing of `crh load` thresholds. Errors name the
// expression and what was expected, because they reach the user verbatim.
#include "loadgen/thresholds.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace crh::loadgen {
namespace {

enum class Kind { latency, rate, run_count, throughput, share };

struct Statistic {
  std::string_view name;
  Kind kind;
};

constexpr std::array<Statistic, 15> statistics{{
    {"p50", Kind::latency},
    {"p90", Kind::latency},
    {"p95", Kind::latency},
    {"p99", Kind::latency},
    {"p99.9", Kind::latency},
    {"max", Kind::latency},
    {"mean", Kind::latency},
    {"min", Kind::latency},
    {"errors", Kind::rate},
    {"indeterminate", Kind::rate},
    {"violations", Kind::run_count},
    {"requests", Kind::run_count},
    {"rounds", Kind::run_count},
    {"rps", Kind::throughput},
    {"unavailable", Kind::share},
}};

constexpr std::string_view known_statistics =
    "p50, p90, p95, p99, p99.9, max, mean, min, errors, indeterminate, violations, requests, "
    "rounds, rps, unavailable or outage.max";
constexpr std::string_view known_operators = "<, <=, >, >=, == or !=";
constexpr std::string_view time_units = "ns, us, ms or s";

const Statistic* find_statistic(std::string_view name) {
  if (name == "p999") name = "p99.9";
  for (const auto& s : statistics)
    if (s.name == name) return &s;
  return nullptr;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_operator_char(char c) { return c == '<' || c == '>' || c == '=' || c == '!'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

[[noreturn]] void fail(std::string_view text, const std::string& why) {
  throw std::invalid_argument("threshold " + in_quotes(text) + ": " + why);
}

// A unit is letters, '%', '/' and the micro sign (U+00B5 or Greek mu U+03BC,
// both two bytes in UTF-8), so "20ms5" splits into unit "ms" and garbage "5".
size_t unit_length(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (is_letter(s[i]) || c == '%' || c == '/') {
      ++i;
    } else if (i + 1 < s.size() && ((c == 0xC2 && static_cast<unsigned char>(s[i + 1]) == 0xB5) ||
                                    (c == 0xCE && static_cast<unsigned char>(s[i + 1]) == 0xBC))) {
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

// `digits` times 10^exponent, rounded once from the exact decimal so that
// "0.1" with exponent -2 is the same double as 1.0 / 1000.
double scaled_decimal(std::string_view text, std::string_view digits, int exponent) {
  std::string s(digits);
  s += 'e';
  s += std::to_string(exponent);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, std::chars_format::general);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value))
    fail(text, "limit " + in_quotes(digits) + " is out of range");
  return value;
}

// Time units as powers of ten of a nanosecond.
int time_unit_exponent(std::string_view unit) {
  if (unit.empty() || unit == "ms") return 6;  // k6 reads a bare number as milliseconds
  if (unit == "ns") return 0;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 3;
  if (unit == "s") return 9;
  return -1;
}

// Rounds to three significant digits, to see where printing will carry (9.996 -> 10.0).
double round_significant(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(x))));
  return std::round(x * scale) / scale;
}

std::string fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

// Whole numbers as they are; others to at least three significant digits
// without trailing zeros (0.02, 12.5, 1521), for percentages, counts and rates.
std::string compact(double x) {
  if (std::isnan(x)) return "n/a";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == std::floor(x) && std::fabs(x) < 1e15) return fixed(x, 0);
  int decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(std::fabs(x)))));
  std::string s = fixed(x, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// Latencies keep three significant digits (1.50 s) so their precision is
// visible, except whole numbers (20 ms) which are usually limits.
std::string format_latency(double ns) {
  if (std::isnan(ns)) return "n/a";
  if (std::isinf(ns)) return ns > 0 ? "inf" : "-inf";
  static constexpr std::array<std::pair<double, std::string_view>, 4> units{
      {{1.0, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}}};
  size_t u = 0;
  while (u + 1 < units.size() && std::fabs(ns) >= units[u + 1].first) ++u;
  double scaled = ns / units[u].first;
  double r = round_significant(scaled);
  // 999.6 us rounds to 1000 us, which reads better as 1.00 ms.
  if (std::fabs(r) >= 1000 && u + 1 < units.size()) {
    ++u;
    scaled = ns / units[u].first;
    r = round_significant(scaled);
  }
  std::string number;
  if (scaled == std::floor(scaled)) {
    number = fixed(scaled, 0);
  } else {
    double a = std::fabs(r);
    number = fixed(scaled, a < 10 ? 2 : a < 100 ? 1 : 0);
  }
  return number + " " + std::string(units[u].second);
}

// The comparison operator: the first run of operator characters in `text`.
struct Operator {
  size_t begin, end;
  std::string_view symbol;
  Comparator comparator;
};

Operator parse_operator(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size() && !is_operator_char(text[begin])) ++begin;
  if (begin == text.size()) fail(text, "no comparison operator (expected " + std::string(known_operators) + ")");
  size_t end = begin;
  while (end < text.size() && is_operator_char(text[end])) ++end;
  const std::string_view op = text.substr(begin, end - begin);
  for (auto c : {Comparator::less, Comparator::less_equal, Comparator::greater, Comparator::greater_equal,
                 Comparator::equal, Comparator::not_equal})
    if (op == comparator_symbol(c)) return {begin, end, op, c};
  fail(text, "unknown operator " + in_quotes(op) + " (expected " + std::string(known_operators) + ")");
}

// The left side: a bare statistic, or SUBJECT "." STATISTIC. Sets the
// threshold's subject and statistic and returns the statistic's kind.
Kind parse_left(std::string_view text, std::string_view left, std::string_view op, Threshold& t) {
  if (left.empty()) fail(text, "expected a statistic before " + in_quotes(op) + ", got nothing");
  std::string_view subject;
  std::string_view stat_name = left;
  // A whole-side match comes first because "p99.9" itself contains a dot.
  const Statistic* stat = find_statistic(left);
  if (!stat) {
    size_t dot = left.find('.');
    if (dot != std::string_view::npos) {
      subject = left.substr(0, dot);
      stat_name = left.substr(dot + 1);
      stat = find_statistic(stat_name);
    }
  }
  if (!stat) fail(text, "unknown statistic " + in_quotes(stat_name) + " (expected " + std::string(known_statistics) + ")");
  if (!subject.empty() || left.size() != stat_name.size()) {
    if (subject.empty())
      fail(text, "empty operation name before \".\" (expected e.g. call." + std::string(stat_name) + ")");
    for (char c : subject)
      if (!is_letter(c) && !is_digit(c) && c != '-' && c != '_')
        fail(text, "invalid operation name " + in_quotes(subject) + " (expected letters, digits, '-' or '_')");
  }
  t.subject = std::string(subject);
  t.statistic = std::string(stat->name);

  if (stat->kind == Kind::latency && subject.empty())
    fail(text,
         t.statistic + " needs an operation, e.g. \"call." + t.statistic + "\" (latency is measured per operation)");
  if ((stat->kind == Kind::run_count || stat->kind == Kind::share) && !subject.empty())
    fail(text, t.statistic + " counts the whole run and takes no operation, got " + in_quotes(subject));
  if (subject == Threshold::kOutageSubject && t.statistic != "max")
    fail(text, "an outage's only statistic is max, its length (e.g. outage.max<1s), got " + in_quotes(t.statistic));
  return stat->kind;
}

// The right side as written: NUMBER [UNIT], whitespace allowed between them.
struct Limit {
  std::string_view digits;
  std::string_view unit;
};

Limit parse_right(std::string_view text, std::string_view right, std::string_view op) {
  if (!right.empty() && right.front() == '-') fail(text, "limit must not be negative, got " + in_quotes(right));
  size_t n = 0;
  while (n < right.size() && is_digit(right[n])) ++n;
  if (n == 0)
    fail(text, "expected a number after " + in_quotes(op) + ", got " + (right.empty() ? "nothing" : in_quotes(right)));
  if (n < right.size() && right[n] == '.') {
    ++n;
    while (n < right.size() && is_digit(right[n])) ++n;
  }
  const std::string_view digits = right.substr(0, n);
  std::string_view rest = right.substr(n);
  while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
  const std::string_view unit = rest.substr(0, unit_length(rest));
  const std::string_view garbage = trim(rest.substr(unit.size()));
  if (!garbage.empty())
    fail(text, "unexpected trailing text " + in_quotes(garbage) + " after the limit " +
                   in_quotes(right.substr(0, right.size() - rest.size() + unit.size())));
  return {digits, unit};
}

// The limit in the unit the statistic's kind is measured in, when the unit
// written fits that kind.
void set_limit(std::string_view text, Kind kind, Limit limit, Threshold& t) {
  const auto [digits, unit] = limit;
  switch (kind) {
    case Kind::latency: {
      if (unit == "%")
        fail(text, t.statistic + " is a latency and takes a time unit (" + std::string(time_units) +
                       "), not a percent \"%\"");
      int exponent = time_unit_exponent(unit);
      if (exponent < 0) fail(text, "unknown unit " + in_quotes(unit) + " (expected " + std::string(time_units) + ")");
      t.quantity = Quantity::latency_ns;
      t.limit = scaled_decimal(text, digits, exponent);
      break;
    }
    case Kind::rate:
      if (unit == "%") {
        t.quantity = Quantity::fraction;
        t.limit = scaled_decimal(text, digits, -2);
        if (t.limit > 1) fail(text, "a share cannot exceed 100%, got " + std::string(digits) + "%");
      } else if (unit.empty()) {
        t.quantity = Quantity::count;
        t.limit = scaled_decimal(text, digits, 0);
      } else {
        fail(text, "unknown unit " + in_quotes(unit) + " for " + t.statistic +
                       " (expected % for a share, or no unit for a count of requests)");
      }
      break;
    case Kind::run_count:
      if (!unit.empty()) fail(text, t.statistic + " is a count and takes no unit, got " + in_quotes(unit));
      t.quantity = Quantity::count;
      t.limit = scaled_decimal(text, digits, 0);
      break;
    case Kind::share:
      if (unit != "%") fail(text, t.statistic + " is a share of the measured time and takes %, got " + in_quotes(unit));
      t.quantity = Quantity::fraction;
      t.limit = scaled_decimal(text, digits, -2);
      if (t.limit > 1) fail(text, "a share cannot exceed 100%, got " + std::string(digits) + "%");
      break;
    case Kind::throughput:
      if (!unit.empty() && unit != "/s")
        fail(text, "unknown unit " + in_quotes(unit) + " for rps (expected \"/s\" or no unit)");
      t.quantity = Quantity::per_second;
      t.limit = scaled_decimal(text, digits, 0);
      break;
  }
}

}  // namespace

std::string_view comparator_symbol(Comparator c) {
  switch (c) {
    case Comparator::less: return "<";
    case Comparator::less_equal: return "<=";
    case Comparator::greater: return ">";
    case Comparator::greater_equal: return ">=";
    case Comparator::equal: return "==";
    case Comparator::not_equal: return "!=";
  }
  return "?";
}

Threshold parse_threshold(std::string_view raw) {
  const std::string_view text = trim(raw);
  if (text.empty()) fail(text, "empty expression (expected e.g. call.p99<20ms or errors<0.1%)");
  const Operator op = parse_operator(text);
  Threshold t;
  t.text = std::string(text);
  t.comparator = op.comparator;
  const Kind kind = parse_left(text, trim(text.substr(0, op.begin)), op.symbol, t);
  set_limit(text, kind, parse_right(text, trim(text.substr(op.end)), op.symbol), t);
  return t;
}

bool holds(const Threshold& t, double actual) {
  // A missing measurement must not pass a gate, not even `!=`.
  if (std::isnan(actual)) return false;
  switch (t.comparator) {
    case Comparator::less: return actual < t.limit;
    case Comparator::less_equal: return actual <= t.limit;
    case Comparator::greater: return actual > t.limit;
    case Comparator::greater_equal: return actual >= t.limit;
    case Comparator::equal: return actual == t.limit;
    case Comparator::not_equal: return actual != t.limit;
  }
  return false;
}

std::string format_quantity(Quantity q, double value) {
  switch (q) {
    case Quantity::latency_ns: return format_latency(value);
    case Quantity::fraction: return std::isnan(value) ? "n/a" : compact(value * 100) + "%";
    case Quantity::count: return compact(value);
    case Quantity::per_second: return std::isnan(value) ? "n/a" : compact(value) + "/s";
  }
  return compact(value);
}

std::string describe(const Threshold& t, double actual, bool held) {
  const std::string other = t.is_outage_max() ? "outage.max<Ns" : t.statistic + "<N%";
  return t.text + ": " + format_quantity(t.quantity, actual) + " (limit " + format_quantity(t.quantity, t.limit) +
         (t.implicit ? ", the default; --threshold '" + other + "' sets another" : "") + ") " +
         (held ? "held" : "BREACHED");
}

}  // namespace crh::loadgen
