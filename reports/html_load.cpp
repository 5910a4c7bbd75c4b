// The HTML report's section of a load result: how it ran, each operation's
// figures and latency by percentile, the figures over time, the race with its
// violations, and the thresholds.
#include <algorithm>
#include <boost/json.hpp>
#include <cmath>

#include "reports/capture_section.hpp"
#include "core/histogram.hpp"
#include "results/keys_capture.hpp"
#include "results/keys_envelope.hpp"
#include "results/keys_load.hpp"
#include "reports/html_parts.hpp"
#include "reports/intervals.hpp"
#include "reports/svg.hpp"
#include "reports/text.hpp"

namespace crh::reports::html {
namespace k = results::keys;
using results::DocView;
namespace {

std::string percent(double fraction) { return fixed(fraction * 100, fraction < 0.001 && fraction > 0 ? 3 : 2) + "%"; }

// Points of a percentile curve (x in nines) from a histogram in the document.
std::vector<std::pair<double, double>> percentile_curve(const DocView& latency) {
  std::vector<std::pair<double, double>> points;
  const auto h = latency[k::latency::histogram];
  if (!h) return points;
  core::Histogram hist;
  try {
    hist = core::Histogram::from_json(*h.value());
  } catch (const std::exception&) {
    return points;
  }
  if (hist.count() == 0) return points;
  const double top = std::min(6.0, std::max(1.0, std::log10(static_cast<double>(hist.count()))));
  for (double x = 0; x < top - 1e-9; x += 0.05)
    points.emplace_back(x, static_cast<double>(hist.quantile(1 - std::pow(10.0, -x))) / 1e6);
  points.emplace_back(top, static_cast<double>(hist.max()) / 1e6);
  return points;
}

std::string ms_label(double ms) { return format_ns(ms * 1e6); }

// Durations by percentile, log-scaled (each step one more nine), as HdrHistogram plots them.
LineChart percentile_chart(std::string title, std::string y_title) {
  LineChart c;
  c.title = std::move(title);
  c.x_title = "percentile (log scale: each step is one more nine)";
  c.y_title = std::move(y_title);
  c.x_scale = XScale::percentile;
  c.y_format = ms_label;
  return c;
}

// The verdict, how the load ran (rounds in flight as the producer wrote them) and its totals.
std::string load_intro(const DocView& load, const std::string& scenario, bool open_loop) {
  namespace t = k::totals;
  const auto totals = load[k::load::totals];
  const auto v = load[k::envelope::verdict];
  std::string out = "<h2 id=\"load-" + esc(scenario) + "\">Load: " + esc(scenario) + "</h2>\n<p>" +
                    badge(v[k::verdict::status].str()) + " " + esc(v[k::verdict::reason].str()) +
                    "</p>\n<p class=\"muted\">" + fixed(totals[t::measured_s].num(), 1) + " s measured";
  if (scenario == "race") {
    const auto in_flight = totals[t::connections];
    out += ", " + whole(load[k::envelope::config][k::load_config::callers].num()) + " callers per round, " +
           (in_flight ? whole(in_flight.num()) + " rounds in flight" : std::string("rounds in flight not recorded"));
  } else if (open_loop) {
    out += ", open loop at " + whole(totals[t::intended_rate].num()) +
           " requests/s (latency from when each request was due)";
  } else {
    out += ", closed loop";
  }
  out += "; " + whole(totals[t::requests].num()) + " requests, " + fixed(totals[t::achieved_rate].num(), 0) +
         "/s achieved, " + whole(totals[t::errors].num()) + " errors (" + percent(totals[t::error_rate].num()) +
         "); busiest generator thread " + whole(totals[t::generator_cpu].num() * 100) + "% of a core.</p>\n";
  for (const auto& why : v[k::verdict::invalid_reasons].items())
    out += "<p class=\"bad\">INVALID: " + esc(why.str()) + "</p>\n";
  if (v[k::verdict::interrupted].boolean())
    out += "<p class=\"bad\">Interrupted: the figures cover the time until Ctrl-C.</p>\n";
  for (const auto& p : load[k::load::restore_problems].items())
    out += "<p class=\"bad\">not restored: " + esc(p.str()) + "</p>\n";
  return out;
}

// A percentile's cell: its value over its interval, or marked not backed.
std::string percentile_cell(const ShownPercentile& p) {
  const std::string value = esc(format_ns(p.value));
  if (!p.backed)
    return "<td class=\"n\">" + value + "<br/><span class=\"notbacked\" title=\"" + esc(not_backed_text(p)) +
           "\">not backed</span><br/><span class=\"ci nb-why\">" + esc(not_backed_text(p)) + "</span></td>";
  const std::string interval = interval_text(p.value, p.lower, p.upper, format_ns);
  return "<td class=\"n\">" + value +
         (interval.empty() ? "" : "<br/><span class=\"ci\" title=\"95% interval, " + esc(p.method) +
                                      (p.blocks_absent ? " (fewer than 10 blocks)" : "") + "\">" + esc(interval) +
                                      "</span>") +
         "</td>";
}

// A row per operation, and their latency by percentile with the intervals.
std::string operations_table(const DocView& load, const std::string& scenario, bool open_loop) {
  namespace o = k::operation;
  std::string out =
      "<table><tr><th>operation</th><th class=\"n\">count</th><th class=\"n\">rate</th><th class=\"n\">errors</th>"
      "<th class=\"n\">refused</th><th class=\"n\">p50</th><th class=\"n\">p90</th><th class=\"n\">p99</th>"
      "<th class=\"n\">p99.9</th><th class=\"n\">max</th><th class=\"n\">mean</th>" +
      std::string(open_loop ? "<th class=\"n\">p99 from send</th>" : "") + "<th>answers besides 200</th></tr>\n";
  LineChart curves = percentile_chart("Latency by percentile, " + scenario, "latency");
  bool intervals = false, few_blocks = false;
  for (const auto& [name, op] : load[k::load::operations].fields()) {
    const auto l = op[o::latency];
    std::string detail;
    for (const auto& [code, n] : op[o::statuses].fields())
      if (code != "200") detail += (name.starts_with("sip-") ? "SIP " : "HTTP ") + esc(code) + " × " + whole(n.num()) + " ";
    for (const auto& [why, n] : op[o::failures].fields()) detail += esc(why) + " × " + whole(n.num()) + " ";
    out += "<tr><td>" + esc(name) + "</td><td class=\"n\">" + whole(op[o::count].num()) + "</td><td class=\"n\">" +
           fixed(op[o::rate].num(), 0) + "/s</td><td class=\"n" + (op[o::errors].num() > 0 ? " bad" : "") + "\">" +
           whole(op[o::errors].num()) + "</td><td class=\"n\">" + whole(op[o::refusals].num()) + "</td>";
    ChartSeries curve{name, percentile_curve(l), false};
    for (const auto& p : percentiles_of(l)) {
      out += percentile_cell(p);
      if (p.has_interval()) curve.whiskers.push_back({nines(p.q), *p.lower / 1e6, *p.upper / 1e6, !p.backed});
      few_blocks |= p.has_interval() && p.blocks_absent;
    }
    intervals |= has_intervals(l);
    for (auto key : {k::latency::max_ns, k::latency::mean_ns})
      out += "<td class=\"n\">" + esc(format_ns(l[key].num())) + "</td>";
    if (open_loop)
      out += "<td class=\"n\">" + esc(format_ns(op[o::latency_uncorrected][k::latency::p99_ns].num())) + "</td>";
    out += "<td>" + detail + "</td></tr>\n";
    curves.series.push_back(std::move(curve));
  }
  out += "</table>\n";
  out += intervals ? "<p class=\"muted\">" + esc(kIntervalLegend) +
                         "; the whiskers on the curves are these intervals. A percentile with fewer than 10 samples "
                         "beyond it is <span class=\"notbacked\">not backed</span>: shown, never failing a "
                         "comparison." +
                         (few_blocks ? " " + esc(std::string(kFewBlocks)) + "." : std::string()) + "</p>\n"
                   : "<p class=\"muted\">No percentile intervals: the document was written by an older crh.</p>\n";
  return out + line_chart(curves);
}

// `crh run --repeat K`: each repetition's own figures (the tables above are
// of their merged histograms), so that their spread shows.
std::string repetitions_table(const DocView& load) {
  const auto reps = load.find(k::repetition::repetitions).items();
  if (reps.empty()) return {};
  std::vector<std::string> ops;
  for (const auto& [name, op] : reps.front()[k::repetition::operations].fields()) ops.push_back(name);
  std::string out = "<h3>Repetitions</h3>\n<p class=\"muted\">The load ran " + std::to_string(reps.size()) +
                    " times, interleaved with the other loads; the figures above are of the repetitions' merged "
                    "histograms, a night's figure is the median of these.</p>\n<table><tr><th>repetition</th>"
                    "<th>verdict</th><th class=\"n\">throughput</th><th class=\"n\">error rate</th>";
  for (const auto& op : ops) out += "<th class=\"n\">" + esc(op) + " p50 / p99</th>";
  out += "</tr>\n";
  for (const auto& r : reps) {
    const auto totals = r[k::repetition::totals];
    out += "<tr><td>" + whole(r[k::repetition::index].num()) + "</td><td>" +
           badge(r.find(k::envelope::verdict).find(k::verdict::status).str()) + "</td><td class=\"n\">" +
           fixed(totals[k::totals::achieved_rate].num(), 0) + "/s</td><td class=\"n\">" +
           percent(totals[k::totals::error_rate].num()) + "</td>";
    for (const auto& op : ops) {
      const auto l = r[k::repetition::operations].find(op).find(k::operation::latency);
      out += "<td class=\"n\">" + esc(format_ns(l.find(k::latency::p50_ns).num())) + " / " +
             esc(format_ns(l.find(k::latency::p99_ns).num())) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// Over time: latency of all operations per point (a second, or more in a
// long run: series_step_s), and throughput per second.
std::string time_charts(const DocView& load, const std::string& scenario) {
  namespace s = k::series;
  const auto series = load[k::load::series].items();
  const double step = std::max(1.0, load.find(k::load::series_step_s).num());  // absent in older documents: 1
  const auto seconds = step * static_cast<double>(std::max<std::size_t>(1, series.size()));
  auto second_label = [](double x) { return fixed(x, 0) + " s"; };
  LineChart latency_time{"Latency over time, all operations, " + scenario,
                         "seconds since measuring began",
                         "latency",
                         XScale::linear,
                         ms_label,
                         second_label,
                         std::pair{0.0, seconds},
                         1.0,
                         {}};
  LineChart rate_time{"Throughput over time, " + scenario,
                      "seconds since measuring began",
                      "requests per second",
                      XScale::linear,
                      [](double r) { return fixed(r, 0) + "/s"; },
                      second_label,
                      std::pair{0.0, seconds},
                      1.0,
                      {}};
  ChartSeries p50{"p50", {}, false}, p99{"p99", {}, true}, requests{"requests/s", {}, false},
      errors{"errors/s", {}, false};
  for (const auto& point : series) {
    const double t = point[s::t].num() + step / 2;  // the middle of its span
    const double n = point[s::requests].num();
    requests.points.emplace_back(t, n / step);
    errors.points.emplace_back(t, point[s::errors].num() / step);
    if (n > 0) {
      p50.points.emplace_back(t, point[s::p50_ns].num() / 1e6);
      p99.points.emplace_back(t, point[s::p99_ns].num() / 1e6);
    }
  }
  latency_time.series = {p50, p99};
  rate_time.series = {requests, errors};
  // Each outage as a red band over its span of time (absent in older documents).
  for (const auto& o : load.find(k::load::outages).find(k::outages::stretches).items()) {
    const Band band{o[k::outage::start_s].num(), o[k::outage::end_s].num(), 0, 0,
                    "outage: " + fixed(o[k::outage::start_s].num(), 3) + " s to " + fixed(o[k::outage::end_s].num(), 3) +
                        " s, no request succeeded",
                    true, "#cf222e"};
    latency_time.bands.push_back(band);
    rate_time.bands.push_back(band);
  }
  return line_chart(latency_time) + line_chart(rate_time);
}

// The stretches in which requests were sent and none succeeded, and the
// closed loop's back-off (absent in older documents).
std::string outages_section(const DocView& load, bool open_loop) {
  const auto outages = load.find(k::load::outages);
  if (!outages.is_object()) return {};
  namespace o = k::outages;
  namespace x = k::outage;
  const double count = outages[o::count].num();
  std::string out = "<h3>Outages</h3>\n<p>Stretches of time in which requests were sent and none succeeded (no 200, "
                    "no refusal the profile expects, no 429), from the last success before to the first after; "
                    "successes under " + whole(outages[o::gap_ms].num()) + " ms apart leave no gap. ";
  out += count == 0 ? std::string("<strong class=\"good\">None.</strong>")
                     : "<strong class=\"bad\">" + whole(count) + " outage(s), " +
                           fixed(outages[o::down_s].num(), 2) + " s in all (" +
                           percent(outages[o::unavailable].num()) + " of the measured time).</strong>";
  const auto back_off = outages[o::back_off];
  if (!open_loop && back_off[k::back_off::count].num() > 0)
    out += " The closed loop paused " + whole(back_off[k::back_off::count].num()) + " time(s) after a failed connect (" +
           fixed(back_off[k::back_off::seconds].num(), 2) + " connection-s): about " +
           whole(back_off[k::back_off::attempts_lost].num()) +
           " attempts not sent at the rate of the rest of the run, which the error rate does not count.";
  out += "</p>\n";
  const auto stretches = outages[o::stretches].items();
  if (stretches.empty()) return out;
  out += "<table><tr><th class=\"n\">from (s)</th><th class=\"n\">to (s)</th><th class=\"n\">length</th>"
         "<th class=\"n\">first down (s)</th><th class=\"n\">last down (s)</th><th>answers</th></tr>\n";
  for (const auto& stretch : stretches) {
    std::string answers;
    for (const auto& [name, n] : stretch[x::answers].fields())
      answers += esc((name.front() >= '0' && name.front() <= '9' ? "HTTP " : "") + name) + " × " + whole(n.num()) + " ";
    out += "<tr class=\"bad\"><td class=\"n\">" + fixed(stretch[x::start_s].num(), 3) +
           (stretch[x::from_start].boolean() ? " (start)" : "") + "</td><td class=\"n\">" +
           fixed(stretch[x::end_s].num(), 3) + (stretch[x::to_end].boolean() ? " (end)" : "") +
           "</td><td class=\"n\">" + fixed(stretch[x::duration_s].num(), 3) + " s</td><td class=\"n\">" +
           fixed(stretch[x::first_down_s].num(), 3) + "</td><td class=\"n\">" +
           fixed(stretch[x::last_down_s].num(), 3) + "</td><td>" + answers + "</td></tr>\n";
  }
  if (static_cast<double>(stretches.size()) < count)
    out += "<tr><td colspan=\"6\">… " + whole(count - static_cast<double>(stretches.size())) +
           " more, counted above; the document lists the first " + std::to_string(stretches.size()) + "</td></tr>\n";
  return out + "</table>\n";
}

// The first violations, each with the operations that prove it.
std::string violations_listing(const DocView& race) {
  constexpr std::size_t kShown = 20;
  const double count = race[k::race::violation_count].num();
  const auto violations = race[k::race::violations].items();
  const std::size_t kept = violations.size();
  std::string out = "<p><strong class=\"" + std::string(count > 0 ? "bad" : "good") + "\">" + whole(count) +
                    " violation(s)</strong>" +
                    (count > static_cast<double>(std::min(kept, kShown))
                         ? " (the first " + std::to_string(std::min(kept, kShown)) +
                               " are shown with the operations that prove them; the JSON result keeps the first " +
                               std::to_string(kept) + ")"
                         : "") +
                    "</p>\n";
  namespace p = k::proof;
  for (std::size_t i = 0; i < kept && i < kShown; ++i) {
    const auto& violation = violations[i];
    // The mixed load's reads name a key or agent and say what was expected.
    const std::string id = violation.find(k::violation::id).str();
    const std::string reproduce = violation.find(k::violation::reproduce).str();
    out += "<div class=\"check o-fail-box\"><span class=\"badge o-fail\">VIOLATION</span> <code>" +
           esc(violation[k::violation::kind].str()) + "</code> " +
           (id.empty() ? "round " + whole(violation[k::violation::round].num()) + ", alias " +
                             esc(violation[k::violation::alias].str())
                       : esc(id)) +
           "<p>" + esc(violation[k::violation::explanation].str()) + "</p>" +
           (id.empty() ? ""
                       : "<p>expected " + esc(violation.find(k::violation::expected).str()) + "; got \"" +
                             esc(violation.find(k::violation::actual).str()) + "\"</p>") +
           "<table><tr><th>op</th><th>caller / id</th><th>value</th><th class=\"n\">sent (ms)</th>"
           "<th class=\"n\">answered (ms)</th><th>outcome</th><th class=\"n\">status</th></tr>";
    for (const auto& op : violation[k::violation::proof].items()) {
      const std::string error = op.find(p::error).str();  // absent without one
      const std::string who = op.find(p::caller).str();
      out += "<tr><td>" + esc(op[p::op].str()) + "</td><td>" + esc(who.empty() ? op.find(p::id).str() : who) +
             "</td><td>" + esc(op.find(p::value).str()) + "</td><td class=\"n\">" +
             fixed(op[p::invoke_ns].num() / 1e6, 3) + "</td><td class=\"n\">" +
             fixed(op[p::complete_ns].num() / 1e6, 3) + "</td><td>" + esc(op[p::outcome].str()) +
             (error.empty() ? "" : " (" + esc(error) + ")") + "</td><td class=\"n\">" + whole(op[p::status].num()) +
             "</td></tr>";
    }
    out += "</table>" + (reproduce.empty() ? "" : "<p>Reproduce: <code>" + esc(reproduce) + "</code></p>") + "</div>\n";
  }
  return out;
}

// The mixed load's history: what was judged, what was not, and the violations.
std::string history_section(const DocView& load, const DocView& check) {
  namespace h = k::history_check;
  std::string out =
      "<h3 id=\"history\">History: reads against writes</h3>\n<p>Each read judged against the writes "
      "sent before it ended, by their times: a linearizable service returns the value the last write "
      "answered before the read was sent left, or one of a write overlapping it. Judged: " +
      whole(check[h::database_reads].num()) + " database reads, " + whole(check[h::agent_reads].num()) +
      " agent states, " + whole(check[h::tags].num()) + " tags (never an alias another tag held).</p>\n";
  for (const auto& why : check[h::unjudged].items()) out += "<p>Not judged: " + esc(why.str()) + "</p>\n";
  return out + violations_listing(load);
}

std::string race_section(const DocView& race) {
  namespace r = k::race;
  const auto skew = race[r::skew];
  const std::string rounds = whole(race[r::rounds].num());
  std::string out =
      "<h3 id=\"race\">Race: first caller wins</h3>\n<p>" + rounds + " rounds of " + whole(race[r::callers].num()) +
      " callers racing for a freshly tagged alias. Exactly one caller must connect per round; "
      "the others must be refused until the tag ends. Release skew (first to last caller's last byte): p50 " +
      esc(format_ns(skew[k::latency::p50_ns].num())) + ", p99 " + esc(format_ns(skew[k::latency::p99_ns].num())) +
      ", max " + esc(format_ns(skew[k::latency::max_ns].num())) +
      (race[r::release_path].str().empty() ? std::string() : ", released by " + esc(race[r::release_path].str())) +
      ". Tags answered 409 (every alias tagged): " + whole(race[r::tag_busy].num()) + ".</p>\n";
  if (skew[k::latency::count].num() > 0)
    out += "<p>Power: " + esc(race_power(format_ns(skew[k::latency::p99_ns].num()))) + ".</p>\n";
  BarChart winners{"Winners per round, " + rounds + " rounds", "callers that connected in the round", "rounds", {}, {}};
  for (const auto& [n, count] : race[r::winners].fields()) {
    winners.bars.emplace_back(n, count.num());
    winners.highlight.push_back(n != "1");
  }
  out += bar_chart(winners);
  LineChart skews = percentile_chart("Release skew by percentile", "skew");
  skews.series = {{"skew", percentile_curve(skew), false}};
  out += line_chart(skews);
  return out + violations_listing(race);
}

// Wire timing (a capture paired with the run): per operation the client's
// latency of the paired requests (from the send: the wire cannot see when a
// request was due) beside the wire's, both as percentile curves, and the
// harness's overhead.
std::string wire_section(const DocView& load, const DocView& wire, const std::string& scenario) {
  namespace l = k::latency;
  namespace x = k::wire;
  std::string out = "<h3 id=\"wire-" + esc(scenario) + "\">Wire timing, " + esc(scenario) + "</h3>\n<p>Capture " +
                    esc(wire[x::file].str()) + ": " + whole(wire[x::exchanges].num()) + " exchanges, " +
                    whole(wire[x::paired].num()) + " paired with the generator's requests; without a pair: " +
                    whole(wire[x::unpaired_client].num()) + " requests, " + whole(wire[x::unpaired_wire].num()) +
                    " exchanges; incomplete (not judged): " + whole(wire[x::incomplete].num()) +
                    ". Wire latency runs from the request's last byte out to the response's last byte in "
                    "(Wireshark's http.time); the harness overhead is the client's latency minus it.</p>\n";
  if (const double negative = wire[x::negative_overhead].num(); negative > 0)
    out += "<p class=\"bad\">" + whole(negative) +
           " request(s) took less at the client than on the wire: counted apart, not in the overhead; "
           "the pairing or the clocks are suspect.</p>\n";
  out +=
      "<table><tr><th>operation</th><th class=\"n\">paired</th><th class=\"n\">client p50</th>"
      "<th class=\"n\">wire p50</th><th class=\"n\">client p99</th><th class=\"n\">wire p99</th>"
      "<th class=\"n\">overhead p50</th><th class=\"n\">overhead p99</th><th class=\"n\">unpaired</th>"
      "<th class=\"n\">incomplete</th></tr>\n";
  LineChart both = percentile_chart("Client and wire latency by percentile, " + scenario, "latency");
  LineChart overhead = percentile_chart("Harness overhead (client − wire) by percentile, " + scenario, "overhead");
  for (const auto& [name, op] : load[k::load::operations].fields()) {
    const auto w = op.find(k::operation::wire);
    if (!w) continue;
    const auto client = w[x::client];  // the same requests as the wire's
    const auto on_wire = w[x::latency];
    const auto over = w[x::overhead];
    out += "<tr><td>" + esc(name) + "</td><td class=\"n\">" + whole(w[x::paired].num()) + "</td>";
    out += "<td class=\"n\">" + esc(format_ns(client[l::p50_ns].num())) + "</td><td class=\"n\">" +
           esc(format_ns(on_wire[l::p50_ns].num())) + "</td><td class=\"n\">" +
           esc(format_ns(client[l::p99_ns].num())) + "</td><td class=\"n\">" +
           esc(format_ns(on_wire[l::p99_ns].num())) + "</td><td class=\"n\">" +
           esc(format_ns(over[l::p50_ns].num())) + "</td><td class=\"n\">" + esc(format_ns(over[l::p99_ns].num())) +
           "</td><td class=\"n\">" + whole(w[x::unpaired].num()) + "</td><td class=\"n\">" +
           whole(w[x::incomplete].num()) + "</td></tr>\n";
    both.series.push_back({name + " client", percentile_curve(client), false});
    both.series.push_back({name + " wire", percentile_curve(on_wire), true});
    overhead.series.push_back({name, percentile_curve(over), false});
  }
  return out + "</table>\n" + line_chart(both) + line_chart(overhead);
}

// Scale-out: the run the shards belong to, which are there, how far apart
// they began measuring, and each shard's provenance.
std::string shards_section(const DocView& load, const std::string& scenario) {
  const auto set = load.find(k::load::shard_set);
  if (!set.is_object()) return {};
  namespace s = k::shard;
  namespace ss = k::shard_set;
  auto list = [](const DocView& v) {
    std::string out;
    for (const auto& i : v.items()) out += (out.empty() ? "" : ", ") + whole(i.num());
    return out;
  };
  std::string out = "<h3>Shards, " + esc(scenario) + "</h3>\n<p>run <code>" + esc(set[ss::run_id].str()) + "</code>: " +
                    whole(set[ss::present].items().size()) + " of " + whole(set[ss::count].num()) +
                    " shards; start skew " + esc(format_ns(set[ss::start_skew_ns].num())) + "</p>\n";
  if (!set[ss::missing].items().empty())
    out += "<p class=\"bad\">MISSING shard(s) " + list(set[ss::missing]) + ": the figures are not the whole load</p>\n";
  if (!set[ss::duplicated].items().empty())
    out += "<p class=\"bad\">DUPLICATED shard(s) " + list(set[ss::duplicated]) + ": only the first of each is merged</p>\n";
  if (!set[ss::late].items().empty())
    out += "<p class=\"bad\">LATE shard(s) " + list(set[ss::late]) + ": began after --start-at had passed</p>\n";
  out += "<table><tr><th>shard</th><th>host</th><th>began measuring</th><th class=\"n\">after the first</th>"
         "<th>clock</th><th class=\"n\">connections</th><th class=\"n\">requests</th><th class=\"n\">req/s</th>"
         "<th>result</th></tr>\n";
  auto rows = [&](const DocView& shards, bool merged) {
    for (const auto& r : shards.items()) {
      const auto clock = r[s::clock];
      out += "<tr" + std::string(merged ? "" : " class=\"regressed\"") + "><td>" + whole(r[s::index].num()) + "/" +
             whole(r[s::count].num()) + (merged ? "" : " (left out)") + (r[s::late].boolean() ? " LATE" : "") +
             "</td><td>" + esc(r[s::host].str()) + "</td><td>" + esc(r[s::started_at].str()) + "</td><td class=\"n\">" +
             esc(format_ns(r[s::start_offset_ns].num())) + "</td><td>" +
             esc(clock[k::clock_source::source].str()) +
             (clock[k::clock_source::synchronized].boolean() ? ", synchronised" : ", not synchronised") +
             "</td><td class=\"n\">" + whole(r[s::connections].num()) + "</td><td class=\"n\">" +
             whole(r[s::requests].num()) + "</td><td class=\"n\">" + whole(r[s::achieved_rate].num()) + "</td><td>" +
             esc(r.find(s::file).is_string() ? r[s::file].str() : std::string()) + "</td></tr>\n";
    }
  };
  rows(load[k::load::shards], true);
  if (const auto left = load.find(k::load::shards_left_out); left.is_array()) rows(left, false);
  return out + "</table>\n";
}

std::string thresholds_table(const DocView& load, const std::string& scenario) {
  const auto thresholds = load[k::load::thresholds].items();
  if (thresholds.empty()) return {};
  std::string out = "<h3>Thresholds, " + esc(scenario) +
                    "</h3>\n<table><tr><th>threshold</th><th>outcome</th><th>measured</th></tr>\n";
  for (const auto& t : thresholds) {
    const bool held = t[k::threshold::held].boolean();
    const auto deferred = t.find(k::threshold::deferred);
    const bool on_merge = deferred.is_bool() && deferred.boolean();
    out += "<tr" + std::string(held || on_merge ? "" : " class=\"regressed\"") + "><td><code>" +
           esc(t[k::threshold::expression].str()) + "</code></td><td>" +
           badge(on_merge ? "deferred" : held ? "held" : "breached") +
           "</td><td>" + esc(t[k::threshold::description].str()) + "</td></tr>\n";
  }
  return out + "</table>\n";
}
}  // namespace

std::string load_section(const DocView& load) {
  const std::string scenario = load[k::envelope::config][k::load_config::scenario].str();
  if (load.find(k::envelope::preflight).is_object())
    return "<h2 id=\"load-" + esc(scenario) + "\">Load: " + esc(scenario) + "</h2>\n<p>" +
           badge(load[k::envelope::verdict][k::verdict::status].str()) + " " +
           esc(load[k::envelope::verdict][k::verdict::reason].str()) + "</p>\n<p>Nothing was measured.</p>\n";
  const bool open_loop = load[k::load::totals][k::totals::intended_rate].num() > 0;
  std::string out =
      load_intro(load, scenario, open_loop) + operations_table(load, scenario, open_loop) + repetitions_table(load) +
      time_charts(load, scenario) + outages_section(load, open_loop);
  if (const auto race = load.find(k::load::race); race.is_object()) out += race_section(race);
  // Another scenario's violations (a tag refused while its history shows an
  // alias free) sit at the top of the load, under the race's names.
  else if (const auto check = load.find(k::load::history_check); check.is_object()) out += history_section(load, check);
  else if (load.find(k::race::violation_count).num() > 0)
    out += "<h3>Invariant violations</h3>\n" + violations_listing(load);
  if (const auto wire = load.find(k::load::wire); wire.is_object()) out += wire_section(load, wire, scenario);
  out += capture_html(load.find(k::live_capture::section));
  return out + shards_section(load, scenario) + thresholds_table(load, scenario);
}

}  // namespace crh::reports::html
