// The split of a load over shards: see shard.hpp.
#include "loadgen/shard.hpp"

#include <sys/timex.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <stdexcept>

namespace crh::loadgen {
namespace {

bool whole_number(std::string_view text, long long& out) {
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && !text.empty();
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

std::invalid_argument bad_start(std::string_view text) {
  return std::invalid_argument("--start-at: expected an RFC 3339 time such as 2026-11-23T10:00:00Z or Unix seconds, got \"" +
                               std::string(text) + "\"");
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  long long i = -1, n = 0;
  if (slash == std::string_view::npos || !whole_number(text.substr(0, slash), i) ||
      !whole_number(text.substr(slash + 1), n))
    throw std::invalid_argument("--shard: expected I/N such as 0/3 (shard I of N, I from 0), got \"" +
                                std::string(text) + "\"");
  if (n < 1 || n > kMaxShards)
    throw std::invalid_argument("--shard " + std::string(text) + ": N must be 1 to " + std::to_string(kMaxShards));
  if (i < 0 || i >= n)
    throw std::invalid_argument("--shard " + std::string(text) + ": I must be 0 to " + std::to_string(n - 1) +
                                " (shards count from 0)");
  return {static_cast<int>(i), static_cast<int>(n)};
}

Share share_of(int total, Shard shard) {
  const int base = total / shard.count, extra = total % shard.count;
  return {shard.index * base + std::min(shard.index, extra), base + (shard.index < extra ? 1 : 0)};
}

double rate_share(double rate, int total_connections, Shard shard) {
  if (!shard.sharded() || total_connections <= 0) return rate;
  return rate * share_of(total_connections, shard).count / total_connections;
}

std::vector<std::string> strided(std::vector<std::string> items, Shard shard) {
  if (!shard.sharded()) return items;
  std::sort(items.begin(), items.end());
  std::vector<std::string> mine;
  for (std::size_t i = static_cast<std::size_t>(shard.index); i < items.size(); i += static_cast<std::size_t>(shard.count))
    mine.push_back(std::move(items[i]));
  return mine;
}

std::string load_tag_name(Shard shard) {
  if (!shard.sharded()) return "crh-load";
  return "crh-load.s" + std::to_string(shard.index) + "of" + std::to_string(shard.count);
}

std::string load_database_key(Shard shard) {
  if (!shard.sharded()) return "crh-probe-load";
  return "crh-probe-load.s" + std::to_string(shard.index) + "of" + std::to_string(shard.count);
}

std::chrono::system_clock::time_point parse_start_at(std::string_view text) {
  using namespace std::chrono;
  const auto dot = text.find('.');
  long long seconds = 0;
  if (whole_number(text.substr(0, dot), seconds)) {  // Unix seconds, maybe with a fraction
    double fraction = 0;
    if (dot != std::string_view::npos) {
      const std::string digits(text.substr(dot + 1));
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) throw bad_start(text);
      fraction = std::stod("0." + digits);
    }
    if (seconds < 0) throw bad_start(text);
    return system_clock::time_point(duration_cast<system_clock::duration>(
        std::chrono::seconds(seconds) + duration<double>(fraction)));
  }
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM); 't' and ' ' as RFC 3339 allows.
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, used = 0;
  const std::string t(text);
  if (std::sscanf(t.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &used) != 6 || used != 19)
    throw bad_start(text);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) throw bad_start(text);
  std::size_t pos = 19;
  nanoseconds frac{0};
  if (pos < t.size() && t[pos] == '.') {
    std::size_t end = pos + 1;
    while (end < t.size() && t[end] >= '0' && t[end] <= '9') ++end;
    if (end == pos + 1) throw bad_start(text);
    std::string digits = t.substr(pos + 1, std::min<std::size_t>(end - pos - 1, 9));
    digits.resize(9, '0');
    frac = nanoseconds(std::stoll(digits));
    pos = end;
  }
  long long offset_min = 0;
  if (pos < t.size() && (t[pos] == 'Z' || t[pos] == 'z') && pos + 1 == t.size()) {
    offset_min = 0;
  } else if (pos + 6 == t.size() && (t[pos] == '+' || t[pos] == '-') && t[pos + 3] == ':') {
    long long oh = 0, om = 0;
    if (!whole_number(std::string_view(t).substr(pos + 1, 2), oh) || !whole_number(std::string_view(t).substr(pos + 4, 2), om) ||
        oh > 23 || om > 59)
      throw bad_start(text);
    offset_min = (t[pos] == '+' ? 1 : -1) * (oh * 60 + om);
  } else {
    throw bad_start(text);  // RFC 3339 needs the offset: a local time would differ per host
  }
  const long long day = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const auto since_epoch = std::chrono::seconds(day * 86400 + h * 3600 + mi * 60 + s - offset_min * 60) + frac;
  return system_clock::time_point(duration_cast<system_clock::duration>(since_epoch));
}

ClockSource read_clock_source() {
  ClockSource c;
  timex tx{};
  const int state = ::adjtimex(&tx);
  if (state == -1) return c;
  c.synchronized = state != TIME_ERROR && (tx.status & STA_UNSYNC) == 0;
  c.max_error_us = tx.maxerror;
  return c;
}

ShardSet shard_set_of(const std::vector<ShardRecord>& kept, const std::vector<ShardRecord>& left_out) {
  ShardSet set;
  if (kept.empty()) return set;
  set.run_id = kept.front().run_id;
  set.count = kept.front().shard.count;
  std::vector<int> seen(static_cast<std::size_t>(set.count), 0);
  std::int64_t first = INT64_MAX, last = INT64_MIN;
  for (const auto& r : kept) {
    if (r.shard.index >= 0 && r.shard.index < set.count) ++seen[static_cast<std::size_t>(r.shard.index)];
    first = std::min(first, r.started_unix_ns);
    last = std::max(last, r.started_unix_ns);
    if (r.late) set.late.push_back(r.shard.index);
  }
  for (const auto& r : left_out)
    if (r.shard.index >= 0 && r.shard.index < set.count) ++seen[static_cast<std::size_t>(r.shard.index)];
  for (int i = 0; i < set.count; ++i) {
    const int n = seen[static_cast<std::size_t>(i)];
    if (n == 0) set.missing.push_back(i);
    else set.present.push_back(i);
    if (n > 1) set.duplicated.push_back(i);
  }
  std::sort(set.late.begin(), set.late.end());
  set.first_start_unix_ns = first;
  set.start_skew_ns = last - first;
  return set;
}

std::string derived_run_id(const std::vector<std::string>& describing) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, over each text and a separator
  for (const auto& text : describing) {
    for (const unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ 0x1F) * 0x100000001b3ull;
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "r-%012llx", static_cast<unsigned long long>(h & 0xFFFFFFFFFFFFull));
  return buf;
}

}  // namespace crh::loadgen
