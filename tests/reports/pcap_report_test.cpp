// The SIP section of a `crh pcap check` document (issue 26) as the terminal
// and the HTML page show it: counts, each called number's winner and whether
// two callers connected inside one tag epoch, the calls themselves; nothing
// of it when the capture held no SIP.
#include "reports/pcap_report.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

namespace crh::reports {
namespace {

namespace json = boost::json;

json::value pcap_document(bool with_sip) {
  json::value doc = json::parse(R"({
    "kind": "pcap",
    "verdict": {"status": "failed", "reason": "1 MUST violation", "exit_code": 1},
    "capture": {"file": "s.pcap", "format": "pcap", "link_types": "EN10MB", "packets": 40, "tcp_packets": 12,
                "skipped_packets": 0, "truncated_packets": 0, "streams": 2, "streams_cut": 0, "exchanges": 6,
                "api_exchanges": 6, "other_exchanges": 0, "requests_without_key": 0, "incomplete": 0,
                "conflicting_overlaps": 0, "unparsed_count": 0, "unparsed": [], "duration_s": 1.5},
    "checks": [], "notes": []})");
  if (with_sip)
    doc.as_object()["sip"] = json::parse(R"({
      "messages": 14, "unreadable": 1, "unreadable_why": ["no CSeq header"], "calls": 3, "connected": 2,
      "refused": 1, "other": 0, "unanswered": 0, "retransmissions": 1, "answers_without_invite": 0,
      "judgement": "1 number judged per tag epoch: 1 with two winners",
      "numbers": [
        {"number": "+15550101", "alias": "alias-1", "calls": 2, "connected": 2, "winner": "+15557000001",
         "connected_callers": ["+15557000001", "+15557000002"], "epochs_judged": 1, "epochs_with_two_winners": 1,
         "judged": "2 callers connected in one tag epoch"},
        {"number": "+15550102", "alias": "", "calls": 1, "connected": 0, "winner": "",
         "connected_callers": [], "epochs_judged": 0, "epochs_with_two_winners": 0,
         "judged": "no tag seen: winners listed, not judged"}],
      "calls_listed": [
        {"call_id": "<script>a</script>@h", "caller": "+15557000001", "called": "+15550101",
         "request_uri": "sip:+15550101@h", "final_status": 200, "outcome": "connected", "retransmissions": 1,
         "transport": "udp", "frames": [4, 6], "time_s": 0.25},
        {"call_id": "b@h", "caller": "+15557000003", "called": "+15550102", "request_uri": "sip:+15550102@h",
         "final_status": 0, "outcome": "unanswered", "retransmissions": 0, "transport": "tcp", "frames": [9, 0],
         "time_s": 0.5}]})");
  return doc;
}

TEST(PcapSipReport, TerminalShowsCountsWinnersAndWithVerboseEveryCall) {
  const auto doc = pcap_document(true);
  const std::string out = pcap_summary(doc, {.color = false, .verbose = false, .quiet = false});
  EXPECT_EQ(out.rfind("SIP calls\n  3 calls (14 messages, 1 unreadable, 1 retransmissions): 2 connected, 1 refused, "
                      "0 other, 0 without a final answer\n",
                      0),
            0u)
      << out;
  EXPECT_NE(out.find("  +15550101 (alias alias-1): 2 calls, 2 connected; winner: +15557000001; connected callers: "
                     "+15557000001, +15557000002; 2 callers connected in one tag epoch\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  +15550102: 1 calls, 0 connected; winner: none; no tag seen"), std::string::npos) << out;
  EXPECT_NE(out.find("    unreadable: no CSeq header\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  1 number judged per tag epoch: 1 with two winners\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("b@h"), std::string::npos) << "calls are listed with --verbose only\n" << out;
  EXPECT_EQ(out.find("sip."), std::string::npos) << "no SIP field missing\n" << out;

  const std::string verbose = pcap_summary(doc, {.color = false, .verbose = true, .quiet = false});
  EXPECT_NE(verbose.find("    b@h: +15557000003 → +15550102 no final answer (unanswered, tcp, frames 9–0, 0 "
                         "retransmissions)\n"),
            std::string::npos)
      << verbose;
  EXPECT_NE(verbose.find("+15557000001 → +15550101 SIP 200 (connected, udp, frames 4–6, 1 retransmissions)"),
            std::string::npos)
      << verbose;

  const std::string quiet = pcap_summary(doc, {.color = false, .verbose = false, .quiet = true});
  EXPECT_EQ(quiet.find("SIP calls"), std::string::npos) << quiet;
}

TEST(PcapSipReport, HtmlHasTheNumbersTheCallsAndEscapesWhatTheWireSent) {
  const std::string page = pcap_html(pcap_document(true));
  const auto section = page.find("<section id=\"sip\"><h2>SIP calls</h2>");
  ASSERT_NE(section, std::string::npos) << page;
  EXPECT_LT(page.find("<section id=\"capture\">"), section);
  EXPECT_LT(section, page.find("<section id=\"checks\">"));
  EXPECT_NE(page.find("<td>+15550101</td><td>alias-1</td><td>2</td><td>2</td><td>+15557000001</td>"
                      "<td>+15557000001, +15557000002</td>"),
            std::string::npos)
      << page;
  // The number with two winners in one epoch is marked FAIL; the unjudged one carries no badge.
  const auto numbers = page.substr(page.find("id=\"sip-numbers\""));
  EXPECT_NE(numbers.find("<tr><td><span class=\"badge o-fail\">FAIL</span></td><td>+15550101</td>"), std::string::npos)
      << numbers;
  EXPECT_NE(numbers.find("<tr><td></td><td>+15550102</td>"), std::string::npos) << numbers;
  EXPECT_NE(page.find("<details><summary>The calls (the first 2 of 3)</summary>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td>&lt;script&gt;a&lt;/script&gt;@h</td>"), std::string::npos) << page;
  EXPECT_EQ(page.find("<script>"), std::string::npos) << "a Call-ID off the wire must not become markup";
  EXPECT_NE(page.find("<td>no final answer</td><td>unanswered</td><td>tcp</td><td>9–0</td>"), std::string::npos)
      << page;
  EXPECT_NE(page.find("<li>no CSeq header</li>"), std::string::npos) << page;
}

TEST(PcapSipReport, NoSipSectionWhenTheCaptureHeldNoSip) {
  const auto doc = pcap_document(false);
  EXPECT_EQ(pcap_summary(doc, {.color = false, .verbose = true, .quiet = false}).find("SIP"), std::string::npos);
  EXPECT_EQ(pcap_html(doc).find("id=\"sip\""), std::string::npos);
}

}  // namespace
}  // namespace crh::reports
