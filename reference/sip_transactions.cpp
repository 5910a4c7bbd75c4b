// Transaction and dialog tables with lazy heaps: a heap entry names a key and
// the serial of the entry it was made for, so a stale one is simply skipped.
#include "sip_transactions.hpp"

#include <algorithm>

namespace crh::reference {

SipTransactions::SipTransactions(std::chrono::milliseconds t1, std::size_t capacity,
                                 std::chrono::seconds dialog_lifetime)
    : t1_(std::max(t1, std::chrono::milliseconds(1))), capacity_(std::max<std::size_t>(capacity, 16)),
      dialog_lifetime_(dialog_lifetime) {}

ServerTransaction* SipTransactions::find(const std::string& key) {
  auto it = table_.find(key);
  return it == table_.end() ? nullptr : &it->second;
}

ServerTransaction& SipTransactions::open(const std::string& key, bool invite, const SipPeer& peer,
                                         SipClock::time_point now) {
  while (table_.size() >= capacity_ && !expiries_.empty()) forget_one(now, true);
  ServerTransaction& tx = table_[key];
  tx = ServerTransaction{};
  tx.key = key;
  tx.serial = ++serial_;
  tx.invite = invite;
  tx.peer = peer;
  // Pending long enough for a delayed final answer, then as long as Timer H.
  tx.forget_at = now + 128 * t1_;
  expiries_.push({tx.forget_at, key, tx.serial});
  return tx;
}

void SipTransactions::sent(ServerTransaction& tx, std::string bytes, unsigned status, SipClock::time_point now) {
  tx.last_response = std::move(bytes);
  tx.last_status = status;
  if (status < 200) return;
  if (!tx.invite) {
    tx.phase = TxPhase::done;  // Timer J: absorb retransmissions for 64*T1
    tx.forget_at = now + 64 * t1_;
  } else {
    tx.phase = TxPhase::answered;
    tx.give_up_at = now + 64 * t1_;  // Timer H (and §13.3.1.4's limit for a 2xx)
    tx.forget_at = tx.give_up_at + 10 * t1_;
    if (!tx.peer.reliable()) {
      tx.interval = t1_;
      tx.retransmit_at = now + tx.interval;
      retransmits_.push({tx.retransmit_at, tx.key, tx.serial});
    }
  }
  expiries_.push({tx.forget_at, tx.key, tx.serial});
}

void SipTransactions::acknowledged(ServerTransaction& tx, SipClock::time_point now) {
  if (tx.phase != TxPhase::answered) return;
  tx.phase = TxPhase::done;
  // Timer I (T4, 5 s = 10*T1): absorb further ACKs, then forget.
  tx.forget_at = std::min(tx.forget_at, now + 10 * t1_);
  expiries_.push({tx.forget_at, tx.key, tx.serial});
}

void SipTransactions::tick(SipClock::time_point now, const std::function<void(const ServerTransaction&)>& resend) {
  const auto t2 = 8 * t1_;  // T2 = 4 s when T1 = 500 ms
  while (!retransmits_.empty() && retransmits_.top().at <= now) {
    Due due = retransmits_.top();
    retransmits_.pop();
    auto* tx = find(due.key);
    if (!tx || tx->serial != due.serial || tx->phase != TxPhase::answered || tx->retransmit_at != due.at) continue;
    if (now >= tx->give_up_at) {  // Timer H: no ACK came
      tx->phase = TxPhase::done;
      continue;
    }
    resend(*tx);
    tx->interval = std::min<SipClock::duration>(2 * tx->interval, t2);
    tx->retransmit_at = now + tx->interval;
    retransmits_.push({tx->retransmit_at, tx->key, tx->serial});
  }
  while (!expiries_.empty() && expiries_.top().at <= now) forget_one(now, false);
  while (!dialog_expiries_.empty() && dialog_expiries_.top().at <= now) forget_dialog(now, false);
}

void SipTransactions::forget_one(SipClock::time_point now, bool force) {
  Due due = expiries_.top();
  expiries_.pop();
  auto it = table_.find(due.key);
  if (it == table_.end() || it->second.serial != due.serial) return;
  if (!force && it->second.forget_at > now) return;  // extended: a later heap entry stands for it
  table_.erase(it);
}

void SipTransactions::forget_dialog(SipClock::time_point now, bool force) {
  Due due = dialog_expiries_.top();
  dialog_expiries_.pop();
  auto it = dialogs_.find(due.key);
  if (it == dialogs_.end() || it->second.serial != due.serial) return;
  if (!force && it->second.forget_at > now) return;
  dialogs_.erase(it);
}

SipClock::time_point SipTransactions::next_due() const {
  auto next = SipClock::time_point::max();
  if (!retransmits_.empty()) next = std::min(next, retransmits_.top().at);
  if (!expiries_.empty()) next = std::min(next, expiries_.top().at);
  if (!dialog_expiries_.empty()) next = std::min(next, dialog_expiries_.top().at);
  return next;
}

SipDialog& SipTransactions::open_dialog(const std::string& key, const std::string& invite_key,
                                        SipClock::time_point now) {
  while (dialogs_.size() >= capacity_ && !dialog_expiries_.empty()) forget_dialog(now, true);
  SipDialog& d = dialogs_[key];
  d = SipDialog{invite_key, false, ++serial_, now + dialog_lifetime_};
  dialog_expiries_.push({d.forget_at, key, d.serial});
  return d;
}

SipDialog* SipTransactions::dialog(const std::string& key) {
  auto it = dialogs_.find(key);
  return it == dialogs_.end() ? nullptr : &it->second;
}

}  // namespace crh::reference
