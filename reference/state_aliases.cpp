// Aliases, tags and calls in the reference service's state (state_impl.hpp
// holds the slots and helpers). Every operation holds its channel's mutex.
#include "state.hpp"

#include "state_impl.hpp"

namespace crh::reference {

std::optional<AliasAddress> State::find_number(std::string_view number) const {
  auto it = impl_->numbers.find(number);
  if (it == impl_->numbers.end()) return std::nullopt;
  return it->second;
}

std::optional<std::vector<AliasView>> State::aliases(std::string_view channel) const {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return std::nullopt;
  std::lock_guard lock(ch->mutex);
  auto now = clock_.now();
  const auto& m = impl_->mutants;
  std::vector<AliasView> out;
  out.reserve(ch->aliases.size());
  for (auto& a : ch->aliases) {
    impl_->expire(a, now);
    AliasView v = a.view();
    if (!a.tag && a.expired_tag && m.has(Mutant::list_stale_after_expiry)) {
      v.tag = a.expired_tag;
      v.expires_at = a.expires_at;
    }
    // list-stale-after-untag: a deletion does not refresh the list (until its tag would have ended).
    if (!a.tag && a.deleted_view && m.has(Mutant::list_stale_after_untag) && now < *a.deleted_view->expires_at)
      v = *a.deleted_view;
    out.push_back(std::move(v));
  }
  return out;
}

AliasSlot* State::Impl::pick_lru(ChannelSlot& ch, Clock::time_point now) const {
  const bool most_recent = faults.has(Fault::lru_mru);
  AliasSlot* pick = nullptr;
  auto older = [&](const AliasSlot& a) {
    // Strict comparisons keep the first alias on ties (never-used aliases, fixture order).
    return !pick || (most_recent ? use_order(a) > use_order(*pick) : use_order(a) < use_order(*pick));
  };
  for (auto& a : ch.aliases) {
    expire(a, now);
    if (a.tag || (a.expired_tag && mutants.has(Mutant::tag_skips_expired))) continue;
    if (older(a)) pick = &a;
  }
  if (!pick && mutants.has(Mutant::tag_overwrites_when_full))
    for (auto& a : ch.aliases)
      if (older(a)) pick = &a;
  return pick;
}

AliasView State::Impl::assign(ChannelSlot& ch, AliasSlot& pick, std::string_view tag, std::int64_t minutes,
                              Clock::time_point now) const {
  const auto& m = mutants;
  pick.tag = std::string(m.has(Mutant::tag_text_truncated) ? cut(tag, 32) : tag);
  pick.expired_tag.reset();
  pick.lifetime = (m.has(Mutant::expiry_drops_hours) ? minutes % 60 : minutes) * minute;
  if (m.has(Mutant::expiry_in_seconds)) pick.lifetime /= 60;
  pick.tagged_at = now;
  pick.expires_at = now + pick.lifetime;
  pick.awaiting_first_call = m.has(Mutant::expiry_from_first_call);
  pick.calls_after_bind = 0;
  pick.bound_calls = 0;
  // untagged-call-binds: the caller an untagged call recorded stays for the new tag.
  if (!m.has(Mutant::untagged_call_binds)) release_caller(pick);
  for (auto& a : ch.aliases) a.deleted_view.reset();  // a tag refreshes the channel's list
  mark_used(ch, pick, now);
  AliasView answer = pick.view();
  if (m.has(Mutant::tag_answer_last_alias)) {  // the loop variable after the loop
    answer.id = ch.aliases.back().id;
    answer.number = ch.aliases.back().number;
  }
  return answer;
}

TagResult State::tag(std::string_view channel, std::string_view tag, std::int64_t minutes) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {TagStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto now = clock_.now();
  AliasSlot* pick = impl_->pick_lru(*ch, now);
  if (!pick) return {TagStatus::all_tagged, {}};
  return {TagStatus::tagged, impl_->assign(*ch, *pick, tag, minutes, now)};
}

TagResult State::tag_pick(std::string_view channel) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {TagStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  AliasSlot* pick = impl_->pick_lru(*ch, clock_.now());
  if (!pick) return {TagStatus::all_tagged, {}};
  return {TagStatus::tagged, pick->view()};
}

TagResult State::tag_apply(std::string_view channel, std::string_view alias, std::string_view tag,
                           std::int64_t minutes) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {TagStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {TagStatus::unknown_channel, {}};
  auto now = clock_.now();
  impl_->expire(*a, now);
  return {TagStatus::tagged, impl_->assign(*ch, *a, tag, minutes, now)};
}

UntagResult State::untag(std::string_view channel, std::string_view alias) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {UntagStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {UntagStatus::unknown_alias, {}};
  const auto& m = impl_->mutants;
  if (m.has(Mutant::untag_index_off_by_one)) {  // the id taken as a 0-based place in the channel
    auto place = static_cast<std::size_t>(a - ch->aliases.data()) + 1;
    if (place >= ch->aliases.size()) return {UntagStatus::unknown_alias, {}};
    a = &ch->aliases[place];
  }
  auto now = clock_.now();
  impl_->expire(*a, now);
  const bool had_expired = a->expired_tag.has_value();
  a->expired_tag.reset();  // an expired tag deleted: tag-skips-expired frees the alias, the list stops showing it
  if (!a->tag) {
    if (had_expired && m.has(Mutant::untag_after_expiry_ok)) return {UntagStatus::untagged, a->view()};
    return {UntagStatus::not_tagged, a->view()};
  }
  if (impl_->faults.has(Fault::delete_tag_noop)) {
    AliasView shown = a->view();
    shown.tag.reset();
    shown.expires_at.reset();
    shown.bound_caller.reset();
    return {UntagStatus::untagged, shown};
  }
  if (m.has(Mutant::list_stale_after_untag)) a->deleted_view = a->view();
  a->tag.reset();
  if (m.has(Mutant::untag_keeps_lock) && a->bound_caller) a->ghost_lock_until = a->expires_at;  // caller kept
  else impl_->release_caller(*a);
  return {UntagStatus::untagged, a->view()};
}

CallResult State::call(std::string_view channel, std::string_view alias, std::string_view caller) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {CallStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {CallStatus::unknown_alias, {}};
  auto now = clock_.now();
  const auto& m = impl_->mutants;
  if (!m.has(Mutant::lock_outlives_expiry)) impl_->expire(*a, now);  // lock-outlives-expiry: never looks
  if (a->tag) {
    const auto holder = impl_->lock_holder(*ch, *a, now);
    // lock-checked-once: the call right after the bind is the only one checked.
    const bool checked = !(holder && a->calls_after_bind > 0 && m.has(Mutant::lock_checked_once));
    if (holder) ++a->calls_after_bind;
    if (checked && holder && !impl_->same_caller(*holder, caller) && !impl_->faults.has(Fault::binding_last_caller))
      return {CallStatus::locked, a->view()};
    if (!holder) {
      impl_->bind(*a, caller, now);
    } else if (checked) {
      a->bound_caller = std::string(caller);
      impl_->bound_call(*a);
    }
  } else if (m.has(Mutant::untag_keeps_lock) && a->bound_caller && now < a->ghost_lock_until &&
             !impl_->same_caller(*a->bound_caller, caller)) {
    return {CallStatus::locked, a->view()};
  } else if (m.has(Mutant::untagged_call_binds)) {
    a->bound_caller = std::string(caller);
  }
  impl_->mark_called(*ch, *a, now);
  return {CallStatus::connected, a->view()};
}

CallResult State::call_check(std::string_view channel, std::string_view alias, std::string_view caller) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {CallStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {CallStatus::unknown_alias, {}};
  auto now = clock_.now();
  impl_->expire(*a, now);
  if (auto holder = impl_->lock_holder(*ch, *a, now); holder && !impl_->same_caller(*holder, caller))
    return {CallStatus::locked, a->view()};
  return {CallStatus::connected, a->view()};
}

CallResult State::call_apply(std::string_view channel, std::string_view alias, std::string_view caller) {
  auto* ch = impl_->find_channel(channel);
  if (!ch) return {CallStatus::unknown_channel, {}};
  std::lock_guard lock(ch->mutex);
  auto* a = Impl::find_alias(*ch, alias);
  if (!a) return {CallStatus::unknown_alias, {}};
  auto now = clock_.now();
  impl_->expire(*a, now);
  if (a->tag) a->bound_caller = std::string(caller);
  impl_->mark_called(*ch, *a, now);
  return {CallStatus::connected, a->view()};
}

}  // namespace crh::reference
