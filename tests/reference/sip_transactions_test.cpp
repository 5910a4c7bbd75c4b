// The transaction table on a clock the test moves: Timer G's doubling up to
// T2, Timer H's end, the ACK stopping it all, expiry and the capacity bound.
#include <gtest/gtest.h>

#include <vector>

#include "reference/sip_transactions.hpp"

namespace crh::reference {
namespace {

using namespace std::chrono_literals;

struct Moving {
  SipTransactions table{100ms, 16};
  SipClock::time_point now{};
  std::vector<SipClock::duration> resent;  // when, since the start
  void until(SipClock::duration end, SipClock::duration step = 10ms) {
    for (auto stop = SipClock::time_point{} + end; now < stop;) {
      now += step;
      table.tick(now, [&](const ServerTransaction&) { resent.push_back(now.time_since_epoch()); });
    }
  }
};

TEST(SipTransactions, FinalOverUdpIsRetransmittedDoublingUpToT2UntilTimerH) {
  Moving m;
  auto& tx = m.table.open("k", true, SipPeer{}, m.now);
  m.table.sent(tx, "SIP/2.0 403 Forbidden\r\n\r\n", 403, m.now);
  m.until(7200ms);
  // T1 = 100 ms: at 100, 300, 700, 1500, then every T2 = 800 ms, until 64*T1 = 6.4 s (the one due at 7.1 s is not sent).
  std::vector<SipClock::duration> expected{100ms, 300ms, 700ms, 1500ms, 2300ms, 3100ms, 3900ms, 4700ms, 5500ms, 6300ms};
  EXPECT_EQ(m.resent, expected);
  EXPECT_EQ(m.table.find("k")->phase, TxPhase::done) << "Timer H ends the retransmissions";
}

TEST(SipTransactions, AckStopsRetransmissionsAndReliableTransportsHaveNone) {
  Moving m;
  auto& tx = m.table.open("k", true, SipPeer{}, m.now);
  m.table.sent(tx, "SIP/2.0 200 OK\r\n\r\n", 200, m.now);
  m.until(350ms);
  EXPECT_EQ(m.resent.size(), 2u);
  m.table.acknowledged(*m.table.find("k"), m.now);
  m.until(3s);
  EXPECT_EQ(m.resent.size(), 2u);

  SipPeer tcp;
  tcp.connection = 7;
  auto& reliable = m.table.open("tcp", true, tcp, m.now);
  m.table.sent(reliable, "SIP/2.0 403 Forbidden\r\n\r\n", 403, m.now);
  m.until(6s);
  EXPECT_EQ(m.resent.size(), 2u) << "no Timer G over TCP";
}

TEST(SipTransactions, EveryEntryIsForgottenAndTheTableIsBounded) {
  Moving m;
  for (int i = 0; i < 40; ++i) {
    m.now += 1ms;
    auto& tx = m.table.open("k" + std::to_string(i), i % 2 == 0, SipPeer{}, m.now);
    m.table.sent(tx, "SIP/2.0 200 OK\r\n\r\n", 200, m.now);
    EXPECT_LE(m.table.transactions(), 16u);
  }
  EXPECT_EQ(m.table.find("k0"), nullptr) << "the first to expire (the oldest) goes first when the table is full";
  EXPECT_NE(m.table.find("k39"), nullptr);
  // A transaction left pending (no final answer) is forgotten too.
  m.table.open("pending", true, SipPeer{}, m.now);
  m.until(14s, 50ms);
  EXPECT_EQ(m.table.transactions(), 0u);
  for (int i = 0; i < 40; ++i) m.table.open_dialog("d" + std::to_string(i), "k", m.now);
  EXPECT_LE(m.table.dialogs(), 16u);
}

}  // namespace
}  // namespace crh::reference
