// aliases: the least recently used pick (R2, checked black-box over tag+delete
// cycles), a tag lasting until deleted (T1), deletion by alias id (R4), and
// unknown channels and aliases refused.
#include <algorithm>
#include <boost/json.hpp>
#include <set>

#include "contracts/suites/suites.hpp"
#include "oracle/verdicts.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;

namespace {

// The untagged aliases at the start; every alias when the list shows no tags.
std::vector<std::string> free_aliases(CheckContext& ctx) {
  auto aliases = list_aliases(ctx);
  if (aliases.empty()) ctx.skip("the channel lists no aliases");
  if (auto free = untagged_aliases(ctx, aliases)) return *free;
  std::vector<std::string> all;
  for (const auto& a : aliases) all.push_back(a.id);
  return all;
}

// The alias list's entry for `alias`; the check fails when the list lacks it.
json::value listed_alias(CheckContext& ctx, const std::string& alias) {
  for (auto& a : list_aliases(ctx))
    if (a.id == alias) return a.value;
  ctx.fail("E7", "the alias list does not hold alias " + alias + ", which tag returned");
}

// R2: 2k tag+delete cycles over k free aliases visit each once, then repeat the order.
void tag_lru(CheckContext& ctx) {
  auto free = free_aliases(ctx);
  if (free.empty()) ctx.skip("every alias of the channel is tagged; R2 needs untagged ones");
  std::vector<std::string> picks;
  for (std::size_t i = 0; i < 2 * free.size(); ++i) {
    const std::string what = "cycle " + std::to_string(i + 1) + " of " + std::to_string(2 * free.size());
    auto e = ctx.send(core::api::Operation::tag, {.tag = tag_name("lru")});
    if (ctx.response(e, what).status != 200)
      ctx.fail("R2", what + ": expected tag to pick an alias, since every earlier cycle deleted its tag, got " +
                         describe_answer(e) + " (a delete that answered 200 left its tag?)");
    auto alias = tagged_alias_id(ctx, ctx.ok_json(e, "E8", what));
    if (!alias) ctx.fail("E8", what + ": expected the tagged alias with an id, got " + describe_answer(e));
    ctx.janitor().tagged(*alias);
    picks.push_back(*alias);
    delete_tag(ctx, *alias);
  }
  if (auto problem = oracle::lru_cycle_problem(picks, free))
    ctx.fail("R2", "tag should pick the least recently used untagged alias: " + *problem);
}

// T1: a live tag is never replaced: k tags take k different aliases, and the
// tag after them is refused.
void tag_until_full(CheckContext& ctx) {
  auto free = free_aliases(ctx);
  if (free.empty()) ctx.skip("every alias of the channel is tagged");
  if (free.size() > 64) ctx.skip("more than 64 free aliases; filling the channel would take too long");
  TagGuard tags(ctx);
  std::set<std::string> tagged;
  for (std::size_t i = 0; i < free.size(); ++i) {
    auto alias = tags.tag("full");
    ctx.require(tagged.insert(alias).second, "T1",
                "tag " + std::to_string(i + 1) + " of " + std::to_string(free.size()) + " returned alias " + alias +
                    ", which this check had tagged already: a live tag was replaced");
  }
  const std::string what = "POST " + tag_path(ctx.target().channel) + " with every alias tagged";
  auto e = ctx.send(core::api::Operation::tag, {.tag = tag_name("full")});
  const auto& r = ctx.response(e, what);
  if (r.status == 200) {
    std::string why;
    auto body = oracle::parse_json(r.body, why);
    auto id = body ? tagged_alias_id(ctx, *body) : std::nullopt;
    untag_if_tagged(ctx, e);
    ctx.require(!id || !tagged.contains(*id), "T1",
                what + ": expected a refusal, got alias " + id.value_or("?") +
                    " again: its live tag was replaced before it expired or was deleted");
    ctx.prefer(false, "T1", what + ": expected a refusal (409), got " + describe_answer(e));
    return;
  }
  ctx.refused(e, "T1", what, ctx.statuses().all_tagged);
}

// T1, E7: the alias list shows a tag (with its expiry) while it lasts and none after its deletion.
void tag_shown_in_list(CheckContext& ctx) {
  TagGuard tags(ctx);
  auto alias = tags.tag("shown");
  auto tagged = listed_alias(ctx, alias);
  ctx.prefer(tag_of(ctx, tagged) == tag_name("shown"), "T1",
             "alias list after tag: expected alias " + alias + " with " + ctx.fields().alias_tag + " \"" +
                 tag_name("shown") + "\", got " + oracle::excerpt(json::serialize(tagged)));
  const auto& expiry = ctx.fields().alias_expiry;
  const auto* until = tagged.is_object() ? tagged.get_object().if_contains(expiry) : nullptr;
  ctx.prefer(until && until->is_string(), "T1",
             "alias list after tag: expected an expiry time in \"" + expiry + "\" (profile fields.alias_expiry), got " +
                 oracle::excerpt(json::serialize(tagged)));
  delete_tag(ctx, alias);
  tags.forget(alias);
  auto untagged = listed_alias(ctx, alias);
  ctx.prefer(tag_of(ctx, untagged).value_or("") == "", "T1",
             "alias list after delete: expected alias " + alias + " untagged, got " +
                 oracle::excerpt(json::serialize(untagged)));
}

// R4: a deletion names its alias: it removes that alias's tag only, and a
// second deletion finds no tag.
void delete_tag_by_id(CheckContext& ctx) {
  if (free_aliases(ctx).size() < 2) ctx.skip("needs two untagged aliases on the channel");
  TagGuard tags(ctx);
  auto a = tags.tag("delete-a");
  auto b = tags.tag("delete-b");
  delete_tag(ctx, a);
  tags.forget(a);
  for (const auto& item : list_aliases(ctx)) {
    // No tag field: untagged (README, fields.alias_tag) for a, which is; for
    // b it may be a list that shows no tags at all, so only a shown tag counts.
    auto t = tag_of(ctx, item.value);
    if (!t) continue;
    if (item.id == a)
      ctx.require(t->empty(), "R4",
                  "after DELETE " + delete_tag_path(ctx.target().channel, a) +
                      " answered 200, the list still shows alias " + a + " tagged \"" + *t + "\"");
    if (item.id == b)
      ctx.require(!t->empty(), "R4", "DELETE of alias " + a + "'s tag also removed alias " + b + "'s tag");
  }
  const std::string what = "DELETE " + delete_tag_path(ctx.target().channel, a) + " again (no tag left)";
  auto again = ctx.send(core::api::Operation::untag, {.id = a});
  const auto& r = ctx.response(again, what);
  if (r.status == 200) ctx.prefer(false, "R4", what + ": expected an error (404), got " + describe_answer(again));
  else ctx.refused(again, "R4", what, ctx.statuses().not_found);
}

// R4, X1, X2: deleting the tag of an alias the channel lacks is refused.
void untag_unknown_alias(CheckContext& ctx) {
  const std::string alias = "crh-no-such-alias";
  ctx.refused(ctx.send(core::api::Operation::untag, {.id = alias}), "R4",
              "DELETE " + delete_tag_path(ctx.target().channel, alias), ctx.statuses().not_found);
}

// E7, E8, X1, X2: listing and tagging a channel that does not exist are refused.
void unknown_channel(CheckContext& ctx) {
  const std::string ch = "crh-no-such-channel";
  const auto on_it = [&](core::api::Operation op, core::api::Sent sent) {
    sent.channel = ch;
    return ctx.send(core::api::request_as_sent(ctx.target(), op, sent));
  };
  ctx.refused(on_it(core::api::Operation::list_aliases, {}), "E7", "GET " + aliases_path(ch), ctx.statuses().not_found);
  ctx.refused(on_it(core::api::Operation::tag, {.tag = tag_name("nowhere"), .minutes = "10"}), "E8",
              "POST " + tag_path(ch), ctx.statuses().not_found);
}

}  // namespace

void add_alias_checks(std::vector<Check>& out) {
  const std::string s = "aliases";
  out.push_back(
      {.id = "aliases.lru-cycle",
       .suite = s,
       .rules = {"R2", "E8", "E9"},
       .summary = "with k untagged aliases, k tag+delete cycles visit each once, and the next k repeat the order",
       .body = tag_lru,
       .owns_channel = true});
  out.push_back({.id = "aliases.tag-until-full",
                 .suite = s,
                 .rules = {"T1", "R2"},
                 .summary = "tagging k free aliases gives k different aliases; one more tag is refused (409 expected), "
                            "never a live tag replaced",
                 .body = tag_until_full,
                 .owns_channel = true});
  out.push_back({.id = "aliases.tag-shown-in-list",
                 .suite = s,
                 .rules = {"T1", "E7"},
                 .severity = Severity::should,
                 .summary = "the alias list shows the tag (and its expiry) after tag and none after delete",
                 .body = tag_shown_in_list});
  out.push_back(
      {.id = "aliases.delete-by-id",
       .suite = s,
       .rules = {"R4", "E9"},
       .summary = "deleting one alias's tag removes that tag only; deleting it again is refused (404 expected)",
       .body = delete_tag_by_id});
  out.push_back(
      {.id = "aliases.unknown-alias",
       .suite = s,
       .rules = {"R4", "X1", "X2"},
       .summary = "deleting the tag of an alias id the channel does not have is refused with a msg (404 expected)",
       .body = untag_unknown_alias});
  out.push_back({.id = "aliases.unknown-channel",
                 .suite = s,
                 .rules = {"E7", "E8", "X1", "X2"},
                 .summary = "a channel that does not exist is refused with a msg on list and tag (404 expected)",
                 .body = unknown_channel});
}

}  // namespace crh::contracts::suites
