// The terminal and HTML renderings of a pcap check document.
#include "reports/pcap_report.hpp"

#include <boost/json.hpp>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "results/keys_capture.hpp"
#include "results/keys_contract.hpp"
#include "results/keys_envelope.hpp"
#include "reports/html_parts.hpp"
#include "reports/text.hpp"

namespace crh::reports {
namespace k = results::keys;
namespace p = results::keys::pcap;
namespace ps = results::keys::pcap_sip;
using results::DocView;

namespace {

// The capture's facts as label/value rows, shared by both renderings.
std::vector<std::pair<std::string, std::string>> capture_rows(const DocView& c) {
  return {{"file", clean(c[p::file])},
          {"format", clean(c[p::format])},
          {"link types", clean(c[p::link_types])},
          {"packets", count_text(c[p::packets]) + " (" + count_text(c[p::tcp_packets]) + " TCP, " + count_text(c[p::skipped_packets]) +
                          " skipped, " + count_text(c[p::truncated_packets]) + " truncated)"},
          {"streams", count_text(c[p::streams]) + " (" + count_text(c[p::streams_cut]) + " cut by a memory bound)"},
          {"exchanges", count_text(c[p::exchanges]) + " (" + count_text(c[p::api_exchanges]) + " of the API, " +
                            count_text(c[p::other_exchanges]) + " other; " + count_text(c[p::requests_without_key]) +
                            " without an Apikey header)"},
          {"incomplete", count_text(c[p::incomplete]) + " exchanges (never judged)"},
          {"conflicting overlaps", count_text(c[p::conflicting_overlaps])},
          {"unparsed streams", count_text(c[p::unparsed_count])},
          {"duration", fixed(c[p::duration_s].num(), 3) + " s"}};
}

std::string unparsed_text(const DocView& u) {
  return "tcp.stream " + count_text(u[p::stream]) + " (" + clean(u[p::client]) + " → " + clean(u[p::server]) +
         ", from frame " + count_text(u[p::first_frame]) + "): " + clean(u[p::why]);
}

// The SIP calls the capture held (issue 26), as text both renderings show.
struct SipNumberLine {
  std::string number, alias, calls, connected, winner, callers, judged;
  std::string outcome;  // fail: two winners inside one tag epoch; pass: epochs judged, none with two
};
struct SipCallLine {
  std::string call_id, caller, called, answer, outcome, transport, frames, retransmissions, at;
};
struct SipLines {
  std::string summary, judgement;
  std::vector<SipNumberLine> numbers;
  std::vector<SipCallLine> calls;
  std::vector<std::string> unreadable;
  std::uint64_t calls_total = 0;
};

SipLines sip_lines(const DocView& s) {
  SipLines out;
  out.calls_total = s[ps::calls].count();
  out.summary = count_text(s[ps::calls]) + " calls (" + count_text(s[ps::messages]) + " messages, " + count_text(s[ps::unreadable]) +
                " unreadable, " + count_text(s[ps::retransmissions]) + " retransmissions): " + count_text(s[ps::connected]) +
                " connected, " + count_text(s[ps::refused]) + " refused, " + count_text(s[ps::other]) + " other, " +
                count_text(s[ps::unanswered]) + " without a final answer";
  out.judgement = clean(s[ps::judgement]);
  for (const auto& n : s[ps::numbers].items()) {
    std::string callers;
    for (const auto& c : n[ps::connected_callers].items()) callers += (callers.empty() ? "" : ", ") + clean(c);
    const std::string winner = clean(n[ps::winner]);
    out.numbers.push_back({clean(n[ps::number]), clean(n[ps::alias]), count_text(n[ps::calls]), count_text(n[ps::connected]),
                           winner.empty() ? "none" : winner, callers, clean(n[ps::judged]),
                           n[ps::epochs_with_two_winners].count() > 0 ? "fail"
                           : n[ps::epochs_judged].count() > 0        ? "pass"
                                                                     : ""});
  }
  for (const auto& c : s[ps::calls_listed].items()) {
    std::string frames;
    for (const auto& f : c[ps::frames].items()) frames += (frames.empty() ? "" : "–") + count_text(f);
    const auto status = c[ps::final_status].count();
    out.calls.push_back({clean(c[ps::call_id]), clean(c[ps::caller]), clean(c[ps::called]),
                         status == 0 ? "no final answer" : "SIP " + std::to_string(status), clean(c[ps::outcome]),
                         clean(c[ps::transport]), frames, count_text(c[ps::retransmissions]),
                         fixed(c[ps::time_s].num(), 3) + " s"});
  }
  for (const auto& w : s[ps::unreadable_why].items()) out.unreadable.push_back(clean(w));
  return out;
}

// Counts, per called number who connected, and with --verbose every call.
std::string sip_text(const SipLines& sip, bool verbose) {
  std::string out = "SIP calls\n  " + sip.summary + "\n";
  for (const auto& n : sip.numbers)
    out += "  " + n.number + (n.alias.empty() ? "" : " (alias " + n.alias + ")") + ": " + n.calls + " calls, " +
           n.connected + " connected; winner: " + n.winner +
           (n.callers.empty() ? "" : "; connected callers: " + n.callers) + "; " + n.judged + "\n";
  if (verbose)
    for (const auto& c : sip.calls)
      out += "    " + c.call_id + ": " + c.caller + " → " + c.called + " " + c.answer + " (" + c.outcome + ", " +
             c.transport + ", frames " + c.frames + ", " + c.retransmissions + " retransmissions)\n";
  for (const auto& w : sip.unreadable) out += "    unreadable: " + w + "\n";
  if (!sip.judgement.empty()) out += "  " + sip.judgement + "\n";
  return out + "\n";
}

std::string sip_html(const SipLines& sip) {
  using html::esc;
  auto cells = [](std::initializer_list<std::string> texts, const char* tag) {
    std::string r;
    for (const auto& t : texts) r += std::string("<") + tag + ">" + esc(t) + "</" + tag + ">";
    return r;
  };
  std::string out = "<section id=\"sip\"><h2>SIP calls</h2>\n<p>" + esc(sip.summary) + "</p>\n";
  if (!sip.numbers.empty()) {
    out += "<table id=\"sip-numbers\">\n<tr><th>binding</th>" +
           cells({"number", "alias", "calls", "connected", "winner", "connected callers", "judged"}, "th") + "</tr>\n";
    for (const auto& n : sip.numbers)
      out += "<tr><td>" + (n.outcome.empty() ? std::string() : html::badge(n.outcome)) + "</td>" +
             cells({n.number, n.alias, n.calls, n.connected, n.winner, n.callers, n.judged}, "td") + "</tr>\n";
    out += "</table>\n";
  }
  if (!sip.judgement.empty()) out += "<p>" + esc(sip.judgement) + "</p>\n";
  if (!sip.calls.empty()) {
    out += "<details><summary>The calls (" +
           (sip.calls.size() < sip.calls_total ? "the first " + std::to_string(sip.calls.size()) + " of " : "") +
           std::to_string(sip.calls_total) + ")</summary><table id=\"sip-calls\">\n<tr>" +
           cells({"Call-ID", "caller", "called", "final answer", "outcome", "transport", "frames", "retransmissions",
                  "INVITE at"},
                 "th") +
           "</tr>\n";
    for (const auto& c : sip.calls)
      out += "<tr>" +
             cells({c.call_id, c.caller, c.called, c.answer, c.outcome, c.transport, c.frames, c.retransmissions, c.at},
                   "td") +
             "</tr>\n";
    out += "</table></details>\n";
  }
  if (!sip.unreadable.empty()) {
    out += "<h3>Unreadable SIP messages (the first " + std::to_string(sip.unreadable.size()) + ")</h3><ul>\n";
    for (const auto& w : sip.unreadable) out += "<li>" + esc(w) + "</li>\n";
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

}  // namespace

std::string pcap_summary(const boost::json::value& document, const TerminalStyle& style) {
  const DocView doc(document);
  std::string out;
  const auto capture = doc[p::capture];
  if (!style.quiet) {
    if (const auto sip = doc.find(ps::section)) out += sip_text(sip_lines(sip), style.verbose);
    out += "Capture\n";
    for (const auto& [label, value] : capture_rows(capture)) out += "  " + label + ": " + value + "\n";
    const auto unparsed = capture[p::unparsed].items();
    const std::size_t shown = style.verbose ? unparsed.size() : std::min<std::size_t>(unparsed.size(), 5);
    for (std::size_t i = 0; i < shown; ++i) out += "    " + unparsed_text(unparsed[i]) + "\n";
    if (shown < capture[p::unparsed_count].count())
      out += "    (" + std::to_string(capture[p::unparsed_count].count() - shown) +
             " more: --verbose or the --json file)\n";
    out += "\n";
  }
  for (const auto& c : doc[k::contract::checks].items()) {
    const std::string outcome = clean(c[k::check::outcome]);
    const bool bad = outcome == "fail" || outcome == "warn";
    if (style.quiet && !bad) continue;
    const char* colour = outcome == "fail" ? "1;31" : outcome == "warn" ? "1;33" : outcome == "pass" ? "32" : "2";
    std::string rules;
    for (const auto& r : c[k::check::rules].items()) rules += " " + r.str();
    out += paint(style.color, status_label(outcome), colour) + "  " + clean(c[k::check::id]) + " [" +
           clean(c[k::check::severity]) + rules + "]: " + clean(c[k::check::message]) + "\n";
    if (!bad && !style.verbose) continue;
    const auto findings = c[k::check::findings].items();
    const auto evidence = c[k::check::evidence].items();
    for (std::size_t i = 0; i < findings.size(); ++i) {
      out += "      " + clean(findings[i][k::finding::text]) + "\n";
      if (i < evidence.size()) out += "        wireshark: " + clean(evidence[i][k::evidence::curl]) + "\n";
    }
  }
  for (const auto& n : doc[k::contract::notes].items()) out += "note: " + clean(n) + "\n";
  const auto verdict = doc[k::envelope::verdict];
  out += "\n" +
         paint(style.color, status_label(clean(verdict[k::verdict::status])),
               verdict[k::verdict::exit_code].count() ? "1;31" : "1;32") +
         ": " + clean(verdict[k::verdict::reason]) + "\n";
  out += missing_line(doc);
  return out;
}

std::string pcap_html(const boost::json::value& document) {
  using html::esc;
  const DocView doc(document);
  const auto capture = doc[p::capture];
  const auto verdict = doc[k::envelope::verdict];
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>crh pcap check: " +
      esc(clean(capture[p::file])) +
      "</title><style>body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}pre{background:#f6f6f6;padding:.5em;"
      "white-space:pre-wrap}</style></head><body>\n<h1>crh pcap check</h1>\n<section id=\"verdict\"><h2>" +
      html::badge(clean(verdict[k::verdict::status])) + " " + esc(clean(verdict[k::verdict::reason])) +
      "</h2></section>\n<section id=\"capture\"><h2>Capture</h2><table>\n";
  for (const auto& [label, value] : capture_rows(capture))
    out += "<tr><th>" + esc(label) + "</th><td>" + esc(value) + "</td></tr>\n";
  out += "</table>\n";
  const auto unparsed = capture[p::unparsed].items();
  if (!unparsed.empty()) {
    out += "<h3>Streams not parsed (the first " + std::to_string(unparsed.size()) + " of " +
           count_text(capture[p::unparsed_count]) + ")</h3><ul>\n";
    for (const auto& u : unparsed) out += "<li>" + esc(unparsed_text(u)) + "</li>\n";
    out += "</ul>\n";
  }
  out += "</section>\n";
  if (const auto sip = doc.find(ps::section)) out += sip_html(sip_lines(sip));
  out += "<section id=\"checks\"><h2>Checks</h2>\n";
  for (const auto& c : doc[k::contract::checks].items()) {
    std::string rules;
    for (const auto& r : c[k::check::rules].items()) rules += " " + r.str();
    const std::string outcome = clean(c[k::check::outcome]);
    out += "<details" + std::string(outcome == "fail" || outcome == "warn" ? " open" : "") + "><summary>" +
           html::badge(outcome) + " <code>" + esc(clean(c[k::check::id])) + "</code> [" +
           esc(clean(c[k::check::severity]) + rules) + "]: " + esc(clean(c[k::check::message])) + "</summary>\n<p>" +
           esc(clean(c[k::check::summary])) + "</p>\n";
    const auto findings = c[k::check::findings].items();
    const auto evidence = c[k::check::evidence].items();
    for (std::size_t i = 0; i < findings.size(); ++i)
      out += "<pre>" + esc(clean(findings[i][k::finding::text])) +
             (i < evidence.size() ? "\nWireshark display filter: " + esc(clean(evidence[i][k::evidence::curl])) : "") +
             "</pre>\n";
    out += "</details>\n";
  }
  out += "</section>\n";
  const auto notes = doc[k::contract::notes].items();
  if (!notes.empty()) {
    out += "<section id=\"notes\"><h2>Notes</h2><ul>\n";
    for (const auto& n : notes) out += "<li>" + esc(clean(n)) + "</li>\n";
    out += "</ul></section>\n";
  }
  if (const auto missing = missing_line(doc); !missing.empty())
    out += "<p id=\"missing\">" + esc(missing) + "</p>\n";
  return out + "</body></html>\n";
}

}  // namespace crh::reports
