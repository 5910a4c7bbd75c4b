// Sending steps and judging every answer with the model of the spec.
#include <algorithm>
#include <charconv>

#include "contracts/explore/explore.hpp"
#include "core/api.hpp"
#include "oracle/answers.hpp"
#include "oracle/linearize.hpp"

namespace crh::contracts::explore {
namespace {

using Endpoint = core::api::Operation;

oracle::Divergence divergence_of(const oracle::Finding& f, const oracle::Operation& op) {
  return {f.severity, f.rule, "", "", oracle::describe(op) + ": " + f.text};
}

// The alias the tag step `serial` picked, as its answer names it.
std::optional<std::string> picked_by(std::uint32_t serial, const Replay& so_far) {
  for (const auto& s : so_far.sent) {
    if (s.step.serial != serial) continue;
    if (s.picked.empty()) return std::nullopt;
    return s.picked;
  }
  return std::nullopt;
}

// The minutes a tag asked for, when they are a plain integer.
std::optional<std::int64_t> minutes_of(const oracle::Operation& op) {
  if (!op.minutes) return std::nullopt;
  std::int64_t v = 0;
  const auto* end = op.minutes->data() + op.minutes->size();
  auto [p, ec] = std::from_chars(op.minutes->data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

void note_rules(const oracle::Prediction& p, Replay& out) {
  for (auto r : {p.status.ok_rule, p.status.refusal_rule, p.status.status_rule})
    if (!r.empty()) out.rules.insert(std::string(r));
  for (const auto& f : p.fields) {
    if (!f.rule.empty()) out.rules.insert(std::string(f.rule));
    for (const auto& x : f.excluded)
      if (!x.rule.empty()) out.rules.insert(std::string(x.rule));
  }
}

}  // namespace

std::int64_t expiry_margin_ms(std::int64_t slowest_answer_ms) { return 2 * slowest_answer_ms + 10; }

void Judge::step(const Step& step, Wire& wire, Replay& out) {
  Sent sent{step, {}, {}, {}};
  const auto& names = profile_.dialect.fields;
  if (step.kind == Step::Kind::before_expiry || step.kind == Step::Kind::after_expiry) {
    // Until the margin's edge, on the side the step names, of the tag's end.
    for (const auto& s : out.sent) {
      if (s.step.serial != step.alias_of || s.ops.empty() || s.answers.empty()) continue;
      const auto& a = s.answers.front().observed;
      const auto minutes = minutes_of(s.ops.front());
      if (!a.answered || a.status != 200 || !minutes || *minutes <= 0) break;
      const std::int64_t ends = s.ops.front().at_ms + *minutes * model_.clock.minute_ms;
      const std::int64_t margin = expiry_margin_ms(slowest_ms_);
      const bool before = step.kind == Step::Kind::before_expiry;
      // Twice the margin: a replay's answers may be slower than the first run's.
      const std::int64_t until = before ? ends - 2 * margin - 5 : ends + 2 * margin + 5;
      if (until - wire.now_ms() > wire.longest_wait_ms()) {
        sent.note = "no wait: the tag ends " + std::to_string(until - wire.now_ms()) + " ms from now";
        break;
      }
      if (until > wire.now_ms()) wire.sleep_until_ms(until);
      sent.note = "waited until " + std::to_string(2 * margin + 5) + " ms " + (before ? "before" : "after") +
                  " the tag's end (" + std::to_string(*minutes) + " × " + std::to_string(model_.clock.minute_ms) +
                  " ms after it was sent; margin " + std::to_string(margin) +
                  " ms from the slowest answer so far, " + std::to_string(slowest_ms_) + " ms)";
      break;
    }
    if (sent.note.empty()) sent.note = "no wait: the tag it waits for was not made";
    out.sent.push_back(std::move(sent));
    return;
  }

  oracle::Operation op = step.op;
  op.auth = auth_of(step.key, wire.api_key());
  if (step.alias_of)
    if (auto id = picked_by(step.alias_of, out)) op.id = *id;
  std::vector<oracle::Operation> ops{op};
  if (step.kind == Step::Kind::burst)
    for (const auto& c : step.also_callers) {
      ops.push_back(op);
      ops.back().caller = c;
    }
  if (step.not_before_ms > wire.now_ms()) wire.sleep_until_ms(step.not_before_ms);
  const std::int64_t at = wire.now_ms();
  for (auto& o : ops) o.at_ms = at;
  auto answers = wire.send(step, ops);
  const std::int64_t took = wire.now_ms() - at;
  out.operations += ops.size();
  if (step.follow_up) out.follow_ups += ops.size();
  // The time a request is sent is not the time the target handles it: the
  // margin covers this answer's time too, judged after it came.
  slowest_ms_ = std::max(slowest_ms_, took);
  model_.clock.margin_ms = expiry_margin_ms(slowest_ms_);
  out.margin_ms = model_.clock.margin_ms;
  sent.ops = ops;
  sent.answers = answers;
  if (op.endpoint == Endpoint::tag && answers.front().observed.answered && answers.front().observed.status == 200) {
    std::string why;
    if (auto body = oracle::parse_json(answers.front().observed.body, why))
      sent.picked = core::api::tagged_alias_id(names, *body).value_or("");
  }
  const std::size_t index = out.sent.size();
  out.sent.push_back(std::move(sent));

  // One operation's divergences on `model` (which it then advances).
  const auto judge = [&](oracle::Model& model, const oracle::Operation& o, const Answer& a) {
    std::vector<oracle::Divergence> found;
    const auto prediction = oracle::predict(model, o, profile_);
    note_rules(prediction, out);
    // The agent's state may move: a form held from before is no longer its form.
    if (o.endpoint == Endpoint::snooze || o.endpoint == Endpoint::wake) forms_.erase(o.id);
    out.rules.insert("X0");  // every answer is awaited: a dropped connection is a divergence
    if (a.timed_out) {
      ++out.timeouts;
      oracle::observe(model, o, oracle::ObservedAnswer::none(), profile_);
      return found;
    }
    if (a.dropped) {
      found.push_back({oracle::Severity::must, "X0", "an answer", "none",
                       oracle::describe(o) + ": the connection closed without an answer (" + a.described +
                           "); rule X0"});
      oracle::observe(model, o, oracle::ObservedAnswer::none(), profile_);
      return found;
    }
    const auto& obs = a.observed;
    // A path ending in '/' is not one the spec names (spec 4 lists none): a
    // refusal of it is as good as an answer, and a 200 is no evidence of which
    // resource it touched (a service may take "x/" for its own key). Only a
    // 5xx is judged; the model takes the effect as unknown until a read tells.
    if (step.trailing_slash && obs.status < 500) {
      oracle::observe(model, o, oracle::ObservedAnswer::none(), profile_);
      return found;
    }
    if (core::throttled(obs.status, profile_.statuses)) ++out.throttled;
    found = oracle::check(prediction, obs);
    if (auto d = same_form(o, obs)) found.push_back(*d);
    // The error shape and the Content-Type, read as on every answer of a run (oracle::judge_answer).
    if (oracle::status_class(obs.status) == oracle::StatusClass::error) out.rules.insert("X2");
    for (const auto& [aspect, f] :
         oracle::judge_answer({.status = obs.status, .content_type = a.content_type, .body = obs.body}).findings)
      if (aspect == oracle::Aspect::error_shape || aspect == oracle::Aspect::content_type)
        found.push_back(divergence_of(f, o));
    oracle::observe(model, o, obs, profile_);
    return found;
  };
  const auto first_must = [](const std::vector<oracle::Divergence>& d) {
    return std::find_if(d.begin(), d.end(), [](const auto& x) { return x.severity == oracle::Severity::must; });
  };
  const auto keep = [&](std::vector<oracle::Divergence> found) {
    if (auto must = first_must(found); must != found.end()) {
      std::stable_partition(found.begin(), found.end(),
                            [](const auto& x) { return x.severity == oracle::Severity::must; });
      out.failure = Failure{index, std::move(found)};
      return;
    }
    for (auto& d : found)
      if (std::none_of(out.should.begin(), out.should.end(), [&](const auto& s) { return s.second.rule == d.rule; }))
        out.should.emplace_back(index, std::move(d));
  };

  if (ops.size() == 1) {
    keep(judge(model_, ops.front(), answers.front()));
    return;
  }
  // Concurrent calls: the answers must be those of some order of them.
  keep(oracle::linearize(model_, ops.size(), [&](oracle::Model& m, std::size_t i) {
         return judge(m, ops[i], answers[i]);
       }).found);
}

// R1 (spec 4, rule 1): snooze and wake answer the agent in the form of the
// single-agent GET. Their answer is held until the next GET of that agent,
// which shows it in the same state: a field written only once it has a value
// differs between states, not between forms. Another snooze or wake, or one
// whose effect is unknown, drops what was held (oracle::form_difference).
std::optional<oracle::Divergence> Judge::same_form(const oracle::Operation& op, const oracle::ObservedAnswer& a) {
  if (op.auth != oracle::Auth::key) return std::nullopt;
  if (op.endpoint == Endpoint::snooze || op.endpoint == Endpoint::wake) {
    if (a.answered && a.status == 200) forms_[op.id] = {oracle::describe(op), a.body};
    return std::nullopt;
  }
  if (op.endpoint != Endpoint::get_agent || !a.answered || a.status != 200) return std::nullopt;
  const auto held = forms_.find(op.id);
  if (held == forms_.end()) return std::nullopt;
  const auto [changed_by, body] = held->second;
  forms_.erase(held);
  std::string why;
  auto answer = oracle::parse_json(body, why);
  auto single = oracle::parse_json(a.body, why);
  if (!single || !answer || !single->is_object() || !answer->is_object()) return std::nullopt;
  const auto diff = oracle::form_difference(single->get_object(), answer->get_object());
  if (!diff) return std::nullopt;
  const std::string expected = "the answer of " + changed_by + " in the form of this GET, made after it";
  return oracle::Divergence{oracle::Severity::must, "R1", expected, *diff,
                            oracle::describe(op) + ": expected " + expected + ", got " + *diff + " (R1)"};
}

Replay replay(const Sequence& sequence, const oracle::Model& start, const core::Profile& profile, Wire& wire) {
  Replay out;
  Judge judge(start, profile);
  for (const auto& step : sequence) {
    if (wire.stopped()) {
      out.interrupted = true;
      break;
    }
    judge.step(step, wire, out);
    if (out.failure) break;
  }
  return out;
}

}  // namespace crh::contracts::explore
