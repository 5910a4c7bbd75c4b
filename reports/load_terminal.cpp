// The load run's terminal summary, read from the result document only.
#include "reports/load_terminal.hpp"

#include <boost/json.hpp>
#include <cstdio>

#include "reports/capture_section.hpp"
#include "results/keys_capture.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "reports/intervals.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace json = boost::json;
namespace k = results::keys;
using results::DocView;
namespace {

std::string right(std::string s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string left(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

bool open_loop_of(const DocView& doc) { return doc[k::load::totals][k::totals::intended_rate].num() > 0; }

// A percentile's cell: its value, "*" when not backed.
std::string percentile_cell(const ShownPercentile& p) { return format_ns(p.value) + (p.backed ? "" : "*"); }

// Under an operation's row: each percentile with its interval.
std::string interval_line(const std::vector<ShownPercentile>& ps) {
  std::string out = left("", 13) + "  95%:";
  for (const auto& p : ps) out += "  " + p.name + " " + percentile_text(p);
  return out + "\n";
}

// A row per operation, with its percentiles' intervals and the answers besides 200 under it.
std::string operations_table(const DocView& doc) {
  namespace l = k::latency;
  namespace o = k::operation;
  const bool open_loop = open_loop_of(doc);
  std::string out = left("operation", 13) + right("count", 9) + right("rate/s", 10) + right("errors", 8) +
                    right("refused", 9) + right("p50", 10) + right("p90", 10) + right("p99", 10) + right("p99.9", 10) +
                    right("max", 10) + right("mean", 10) + (open_loop ? right("p99 sent", 11) : "") + "\n";
  bool intervals = false, not_backed = false, few_blocks = false;
  for (const auto& [name, op] : doc[k::load::operations].fields()) {
    const auto lat = op[o::latency];
    const auto ps = percentiles_of(lat);
    out += left(clean(name), 13) + right(fixed(op[o::count].num(), 0), 9) + right(fixed(op[o::rate].num(), 0), 10) +
           right(fixed(op[o::errors].num(), 0), 8) + right(fixed(op[o::refusals].num(), 0), 9);
    for (const auto& p : ps) out += right(percentile_cell(p), 10);
    out += right(format_ns(lat[l::max_ns].num()), 10) + right(format_ns(lat[l::mean_ns].num()), 10) +
           (open_loop ? right(format_ns(op[o::latency_uncorrected][l::p99_ns].num()), 11) : "") + "\n";
    if (has_intervals(lat)) {
      intervals = true;
      out += interval_line(ps);
      for (const auto& p : ps) {
        not_backed |= !p.backed;
        few_blocks |= p.has_interval() && p.blocks_absent;
      }
    }
    std::string detail;
    const std::string protocol = name.starts_with("sip-") ? " SIP " : " HTTP ";  // the SIP call driver's statuses
    for (const auto& [code, n] : op[o::statuses].fields())
      if (code != "200") detail += protocol + clean(code) + "×" + fixed(n.num(), 0);
    for (const auto& [why, n] : op[o::failures].fields()) detail += " " + clean(why) + "×" + fixed(n.num(), 0);
    if (!detail.empty()) out += left("", 13) + "  answers besides 200:" + detail + "\n";
  }
  if (intervals)
    out += std::string(kIntervalLegend) +
           (few_blocks ? "\n" + std::string(kFewBlocks) : "") +
           (not_backed ? "\n* not backed: fewer than 10 samples beyond the percentile; it never fails a comparison" : "") +
           "\n";
  else if (!doc[k::load::operations].fields().empty())
    out += "(no percentile intervals: the document was written by an older crh)\n";
  if (open_loop)
    out +=
        "Latency is measured from when each request was due (no coordinated omission); "
        "\"p99 sent\" is the uncorrected figure, from when it was sent.\n";
  return out;
}

// `crh run --repeat K`: a line per repetition (the table above is of their merged histograms).
std::string repetition_lines(const DocView& doc) {
  const auto reps = doc.find(k::repetition::repetitions).items();
  if (reps.empty()) return {};
  std::string out = "repetitions (the table above is of their merged histograms; a night's figure is their median):\n";
  for (const auto& r : reps) {
    const auto totals = r[k::repetition::totals];
    out += "  " + fixed(r[k::repetition::index].num(), 0) + ": " + fixed(totals[k::totals::achieved_rate].num(), 0) +
           "/s, errors " + fixed(totals[k::totals::error_rate].num() * 100, 2) + "%";
    for (const auto& [name, op] : r[k::repetition::operations].fields()) {
      const auto l = op.find(k::operation::latency);
      out += "; " + clean(name) + " p50 " + format_ns(l.find(k::latency::p50_ns).num()) + " p99 " +
             format_ns(l.find(k::latency::p99_ns).num());
    }
    out += "\n";
  }
  return out;
}

// Wire timing (a capture paired with the run): per operation the wire
// latency beside the client's of the same paired requests (from the send, as
// the wire cannot see when a request was due), and what the harness added.
std::string wire_section(const DocView& doc, const DocView& wire) {
  namespace l = k::latency;
  namespace x = k::wire;
  std::string out = "\nwire (capture " + clean(wire[x::file]) + "): " + fixed(wire[x::exchanges].num(), 0) +
                    " exchanges, " + fixed(wire[x::paired].num(), 0) + " paired; without a pair: " +
                    fixed(wire[x::unpaired_client].num(), 0) + " requests, " + fixed(wire[x::unpaired_wire].num(), 0) +
                    " exchanges; incomplete (not judged): " + fixed(wire[x::incomplete].num(), 0) + "\n";
  if (const double negative = wire[x::negative_overhead].num(); negative > 0)
    out += "  " + fixed(negative, 0) +
           " request(s) took less at the client than on the wire (counted apart, not in the overhead): "
           "the pairing or the clocks are suspect\n";
  out += "  " + left("operation", 13) + right("paired", 9) + right("client p50", 12) + right("wire p50", 10) +
         right("client p99", 12) + right("wire p99", 10) + "\n";
  std::string overheads;
  for (const auto& [name, op] : doc[k::load::operations].fields()) {
    const auto w = op.find(k::operation::wire);
    if (!w) continue;
    const auto client = w[x::client];  // the same requests as the wire's
    const auto on_wire = w[x::latency];
    out += "  " + left(clean(name), 13) + right(fixed(w[x::paired].num(), 0), 9) +
           right(format_ns(client[l::p50_ns].num()), 12) + right(format_ns(on_wire[l::p50_ns].num()), 10) +
           right(format_ns(client[l::p99_ns].num()), 12) + right(format_ns(on_wire[l::p99_ns].num()), 10) + "\n";
    const auto overhead = w[x::overhead];
    overheads += "  " + left(clean(name), 13) + " harness overhead (client − wire): p50 " +
                 format_ns(overhead[l::p50_ns].num()) + " p99 " + format_ns(overhead[l::p99_ns].num()) + "\n";
  }
  return out + overheads;
}

// "  violations: N" and the first ones (every one when verbose), of the race or
// of a load whose violations sit at its top.
std::string violation_lines(const DocView& holder, const TerminalStyle& style) {
  namespace r = k::race;
  const double violations = holder[r::violation_count].num();
  std::string out =
      "  violations: " + (violations > 0 ? paint(style.color, fixed(violations, 0), "1;31") : std::string("0")) + "\n";
  std::size_t shown = 0;
  for (const auto& v : holder[r::violations].items()) {
    if (!style.verbose && ++shown > 5) {
      out += "  … " + fixed(violations - 5, 0) + " more in the --json document (or run with --verbose)\n";
      break;
    }
    // The mixed load's reads name a key or agent, not a round.
    const std::string id = v.find(k::violation::id).str();
    out += "  " + paint(style.color, "VIOLATION", "1;31") + " " + clean(v[k::violation::kind]) +
           (id.empty() ? " (round " + fixed(v[k::violation::round].num(), 0) + ")" : "") + ": " +
           clean(v[k::violation::explanation]) + "\n";
    if (style.verbose || shown <= 1)
      for (const auto& op : v[k::violation::proof].items())
        out += "      " + clean(op[k::proof::op]) +
               (op.find(k::proof::value).str().empty() ? "" : " \"" + clean(op[k::proof::value]) + "\"") + " sent " +
               fixed(op[k::proof::invoke_ns].num() / 1e6, 3) + " ms, answered " +
               fixed(op[k::proof::complete_ns].num() / 1e6, 3) + " ms: " + clean(op[k::proof::outcome]) + " " +
               fixed(op[k::proof::status].num(), 0) + "\n";
  }
  // One command runs the load again (every violation of a run has the same).
  const auto first = holder[r::violations].items();
  if (!first.empty() && !first.front().find(k::violation::reproduce).str().empty())
    out += "  reproduce: " + clean(first.front()[k::violation::reproduce]) + "\n";
  return out;
}

// The mixed load's history: what was judged, what was not and why.
std::string history_lines(const DocView& doc, const TerminalStyle& style) {
  namespace h = k::history_check;
  const auto check = doc[k::load::history_check];
  std::string out = "\nhistory: " + fixed(check[h::database_reads].num(), 0) + " database reads, " +
                    fixed(check[h::agent_reads].num(), 0) + " agent states and " + fixed(check[h::tags].num(), 0) +
                    " tags judged against the run's writes\n";
  for (const auto& why : check[h::unjudged].items()) out += "  not judged: " + clean(why) + "\n";
  return out + violation_lines(doc, style);
}

std::string race_section(const DocView& race, const TerminalStyle& style) {
  namespace r = k::race;
  const auto skew = race[r::skew];
  std::string winners;
  for (const auto& [n, rounds] : race[r::winners].fields())
    winners += " " + clean(n) + " winner(s)×" + fixed(rounds.num(), 0);
  std::string out = "\nrace: " + fixed(race[r::rounds].num(), 0) + " rounds of " + fixed(race[r::callers].num(), 0) +
                    " callers;" + (winners.empty() ? " no round measured" : winners) + "\n";
  out += "  release skew (first to last caller's send): p50 " + format_ns(skew[k::latency::p50_ns].num()) + ", p99 " +
         format_ns(skew[k::latency::p99_ns].num()) + ", max " + format_ns(skew[k::latency::max_ns].num()) + "\n";
  if (const auto path = race[r::release_path].str(); !path.empty()) out += "  released by: " + clean(path) + "\n";
  if (skew[k::latency::count].num() > 0)
    out += "  power: " + race_power(format_ns(skew[k::latency::p99_ns].num())) + "\n";
  if (const double busy = race[r::tag_busy].num(); busy > 0)
    out += "  tags answered 409 (every alias tagged): " + fixed(busy, 0) + "\n";
  return out + violation_lines(race, style);
}

// Scale-out: the run, the shards there, missing or late, the start skew and
// each shard's provenance.
std::string shard_lines(const DocView& doc, const TerminalStyle& style) {
  const auto set = doc.find(k::load::shard_set);
  const auto shards = doc.find(k::load::shards);
  if (!shards.is_array()) return {};
  namespace s = k::shard;
  namespace ss = k::shard_set;
  auto list = [](const DocView& v) {
    std::string out;
    for (const auto& i : v.items()) out += (out.empty() ? "" : ", ") + fixed(i.num(), 0);
    return out;
  };
  if (!set.is_object()) {  // one shard's own result
    const auto r = shards.items().front();
    return "\nshard " + fixed(r[s::index].num(), 0) + "/" + fixed(r[s::count].num(), 0) + " of run " + clean(r[s::run_id]) +
           " on " + clean(r[s::host]) + ": began measuring " + clean(r[s::started_at]) +
           (r[s::planned_unix_ns].num() != 0 ? " for --start-at " + clean(r[s::planned_at]) : std::string()) +
           (r[s::late].boolean() ? " " + paint(style.color, "LATE", "1;33") + " (after --start-at had passed)" : "") +
           (r[s::clock][k::clock_source::synchronized].boolean() ? "" : "; clock not synchronised (NTP)") + "\n";
  }
  std::string out = "\nshards: run " + clean(set[ss::run_id]) + ", " +
                    fixed(static_cast<double>(set[ss::present].items().size()), 0) + " of " +
                    fixed(set[ss::count].num(), 0) + "; start skew " + format_ns(set[ss::start_skew_ns].num()) + "\n";
  if (!set[ss::missing].items().empty())
    out += "  " + paint(style.color, "MISSING", "1;31") + " shard(s) " + list(set[ss::missing]) +
           ": the figures are not the whole load\n";
  if (!set[ss::duplicated].items().empty())
    out += "  " + paint(style.color, "DUPLICATED", "1;31") + " shard(s) " + list(set[ss::duplicated]) +
           ": only the first of each is merged\n";
  for (const auto& r : shards.items())
    out += "  " + fixed(r[s::index].num(), 0) + "/" + fixed(r[s::count].num(), 0) + " on " + clean(r[s::host]) +
           ": began " + clean(r[s::started_at]) + " (+" + format_ns(r[s::start_offset_ns].num()) + ")" +
           (r[s::late].boolean() ? " " + paint(style.color, "LATE", "1;33") + " (after --start-at)" : std::string()) +
           ", " + fixed(r[s::connections].num(), 0) + " connections, " + fixed(r[s::requests].num(), 0) +
           " requests, " + fixed(r[s::achieved_rate].num(), 0) + " req/s" +
           (r[s::clock][k::clock_source::synchronized].boolean() ? "" : ", clock not synchronised") + "\n";
  return out;
}

// A stretch of `outages.stretches`: start to end, how long, the answers.
std::string stretch_text(const DocView& o) {
  namespace x = k::outage;
  std::string answers;
  for (const auto& [name, n] : o[x::answers].fields())
    answers += (answers.empty() ? "" : ", ") + std::string(name.front() >= '0' && name.front() <= '9' ? "HTTP " : "") +
               clean(name) + "×" + fixed(n.num(), 0);
  return fixed(o[x::start_s].num(), 3) + " s to " + fixed(o[x::end_s].num(), 3) + " s (" +
         fixed(o[x::duration_s].num(), 2) + " s" + (o[x::from_start].boolean() ? ", from the start" : "") +
         (o[x::to_end].boolean() ? ", to the end" : "") + "): " + answers;
}

// The stretches in which requests were sent and none succeeded, and the
// closed loop's back-off (absent from older documents).
std::string outage_lines(const DocView& doc, const TerminalStyle& style) {
  const auto outages = doc.find(k::load::outages);
  if (!outages.is_object()) return {};
  namespace o = k::outages;
  const double count = outages[o::count].num();
  std::string out = "\noutages (requests sent, none succeeded; successes under " + fixed(outages[o::gap_ms].num(), 0) +
                    " ms apart leave no gap): ";
  if (count == 0) out += "none\n";
  else
    out += fixed(count, 0) + ", " + fixed(outages[o::down_s].num(), 2) + " s down in all (" +
           fixed(outages[o::unavailable].num() * 100, 2) + "% of the measured time)\n";
  std::size_t shown = 0;
  for (const auto& stretch : outages[o::stretches].items()) {
    if (!style.verbose && ++shown > 5) {
      out += "  … " + fixed(count - 5, 0) + " more in the --json document (or run with --verbose)\n";
      break;
    }
    out += "  " + paint(style.color, "DOWN", "1;31") + " " + stretch_text(stretch) + "\n";
  }
  const auto back_off = outages[o::back_off];
  if (!open_loop_of(doc) && back_off[k::back_off::count].num() > 0)
    out += "  closed loop: " + fixed(back_off[k::back_off::count].num(), 0) + " pause(s) after a failed connect, " +
           fixed(back_off[k::back_off::seconds].num(), 2) + " connection-s: about " +
           fixed(back_off[k::back_off::attempts_lost].num(), 0) +
           " attempts not sent (at the rate of the rest of the run), which the error rate does not count\n";
  return out;
}

// The generator's own figures, what made the run invalid or incomplete, and the verdict.
std::string verdict_lines(const DocView& doc, const TerminalStyle& style) {
  namespace t = k::totals;
  const auto totals = doc[k::load::totals];
  const bool open_loop = open_loop_of(doc);
  std::string out = "\ngenerator: " + fixed(totals[t::achieved_rate].num(), 0) + " req/s achieved" +
                    (open_loop ? " of " + fixed(totals[t::intended_rate].num(), 0) + " intended" : std::string()) +
                    "; busiest thread " + fixed(totals[t::generator_cpu].num() * 100, 0) + "% of a core\n";
  const auto verdict = doc[k::envelope::verdict];
  for (const auto& why : verdict[k::verdict::invalid_reasons].items())
    out += paint(style.color, "INVALID", "1;33") + ": " + clean(why) + "\n";
  for (const auto& p : doc[k::load::restore_problems].items()) out += "not restored: " + clean(p) + "\n";
  if (verdict[k::verdict::interrupted].boolean()) out += "interrupted: the figures cover the time until Ctrl-C\n";
  out += shard_lines(doc, style);
  const std::string status = clean(verdict[k::verdict::status]);
  const bool named = status == "passed" || status == "incomplete" || could_not_tell(status);
  out += "verdict: " + paint(style.color, named ? status_label(status) : "FAILED", status_color(status)) +
         " (" + clean(verdict[k::verdict::reason]) + ")\n";
  return out;
}

}  // namespace

std::string load_summary(const DocView& doc, const TerminalStyle& style) {
  if (auto line = preflight_line(doc, "crh load"); !line.empty()) return line;
  const auto target = doc[k::envelope::target];
  std::string out = "crh load: " + clean(doc[k::envelope::config][k::load_config::scenario]) + " on " +
                    clean(target[k::target::base_url]) + ", channel " + clean(target[k::target::channel]) +
                    (target[k::target::embedded].boolean() ? " (the embedded reference service)" : "") + "; " +
                    fixed(doc[k::load::totals][k::totals::measured_s].num(), 1) + " s measured\n\n";
  if (!style.quiet) out += operations_table(doc) + repetition_lines(doc);
  if (const auto wire = doc.find(k::load::wire); wire && !style.quiet) out += wire_section(doc, wire);
  if (const auto race = doc.find(k::load::race)) out += race_section(race, style);
  else if (doc.find(k::load::history_check).is_object()) out += history_lines(doc, style);
  else if (doc.find(k::race::violation_count).num() > 0) out += "\n" + violation_lines(doc, style);
  out += outage_lines(doc, style);
  const auto thresholds = doc[k::load::thresholds].items();
  if (!thresholds.empty()) {
    out += "\nthresholds:\n";
    for (const auto& t : thresholds)
      out += "  " +
             paint(style.color, clean(t[k::threshold::description]),
                   t[k::threshold::held].boolean() || t.find(k::threshold::deferred).boolean() ? "32" : "1;31") +
             "\n";
  }
  out += capture_terminal(doc.find(k::live_capture::section), style.color);
  return out + verdict_lines(doc, style);
}

std::string load_summary(const json::value& result, const TerminalStyle& style) {
  const DocView doc(result);
  std::string out = load_summary(doc, style);
  return out + missing_line(doc);
}

}  // namespace crh::reports
