// errors: unknown routes, wrong methods and malformed parameters are refused
// with the documented error shape, never with a 5xx (X1, X2, R3); and the
// error shape over every error answer of the run.
#include <boost/json.hpp>

#include "contracts/suites/suites.hpp"

namespace crh::contracts::suites {
namespace json = boost::json;
using namespace api;

namespace {

// A tag request the target should refuse. If it tags anyway, the alias is
// untagged again.
core::Exchange bad_tag(CheckContext& ctx, std::vector<core::Param> params, const std::string& what) {
  auto e = ctx.send("POST", tag_path(ctx.target().channel), params);
  ctx.response(e, what);
  untag_if_tagged(ctx, e);
  return e;
}

// MUST: not 5xx and, when refused, the error shape. `must_refuse` adds MUST
// not 200; otherwise a 200 is a SHOULD finding.
void judge(CheckContext& ctx, const core::Exchange& e, std::string_view rule, const std::string& what,
           const std::vector<unsigned>& statuses, bool must_refuse) {
  const auto& r = ctx.response(e, what);
  if (r.status == 200 && !must_refuse) {
    ctx.prefer(false, rule, what + ": expected an error (" + statuses_text(statuses) + "), got " + describe_answer(e));
    return;
  }
  ctx.refused(e, rule, what, statuses);
}

struct WrongMethod {
  const char* name;
  const char* method;
  std::function<std::string(CheckContext&)> path;
};

const std::vector<WrongMethod>& wrong_methods() {
  static const std::vector<WrongMethod> wrong{
      {"agents-list", "DELETE", [](CheckContext&) { return agents_path(); }},
      {"agent-get", "POST", [](CheckContext& c) { return agent_path(first_agent(c)); }},
      {"agent-snooze", "GET", [](CheckContext& c) { return agent_op_path(first_agent(c), "snooze"); }},
      {"database", "PATCH", [](CheckContext& c) { return database_path(probe_key(c, "errors")); }},
      {"aliases-list", "PUT", [](CheckContext& c) { return aliases_path(c.target().channel); }},
      {"tag", "PATCH", [](CheckContext& c) { return tag_path(c.target().channel); }},
  };
  return wrong;
}

// Where a bad tag's minutes come from: fixed, or just outside the range the
// profile says the target accepts (the spec gives none, DESIGN.md §3).
enum class MinutesBound { none, zero, above_max };

struct BadTag {
  const char* name;
  std::vector<core::Param> params;
  const char* what;
  std::vector<std::string> rules;
  Severity severity;
  MinutesBound bound = MinutesBound::none;
};

const std::vector<BadTag>& bad_tags() {
  static const std::vector<BadTag> bad{
      {"missing-tag", {{"minutes", "10", true}}, "without tag", {"R3", "X1", "X2"}, Severity::must},
      {"missing-minutes", {{"tag", tag_name("no-minutes")}}, "without minutes", {"R3", "X1", "X2"}, Severity::must},
      {"missing-both", {}, "without parameters", {"R3", "X1", "X2"}, Severity::must},
      {"minutes-abc", {{"tag", tag_name("bad")}, {"minutes", "abc"}}, "with minutes=abc", {"X1", "X2"}, Severity::must},
      {"minutes-fraction",
       {{"tag", tag_name("bad")}, {"minutes", "1.5", true}},
       "with minutes=1.5",
       {"X1", "X2"},
       Severity::must},
      {"minutes-negative",
       {{"tag", tag_name("bad")}, {"minutes", "-1", true}},
       "with minutes=-1",
       {"X1", "X2"},
       Severity::should},
      {"minutes-zero",
       {{"tag", tag_name("bad")}},
       "with minutes=0",
       {"X1", "X2"},
       Severity::should,
       MinutesBound::zero},
      {"minutes-too-large",
       {{"tag", tag_name("bad")}},
       "with minutes above the profile's maximum",
       {"X1", "X2"},
       Severity::should,
       MinutesBound::above_max},
      {"empty-tag", {{"tag", ""}, {"minutes", "10", true}}, "with an empty tag", {"X1", "X2"}, Severity::should},
  };
  return bad;
}

// X1, X2: paths the API does not have are refused with the error shape.
void unknown_route(CheckContext& ctx) {
  const std::string prefix(core::api::kVersionPrefix);  // "/api/v1"
  const std::string other_version = "/api/v2" + agents_path().substr(prefix.size());
  for (const std::string& path : {std::string("/crh-no-such-route"), prefix + "/crh-no-such-route", other_version})
    ctx.refused(ctx.send("GET", path), "X1", "GET " + path, ctx.statuses().not_found);
}

// X1, X2: a method the path does not have is refused, never a 5xx; a 200 is a SHOULD finding.
void wrong_method(CheckContext& ctx, const WrongMethod& w) {
  auto path = w.path(ctx);
  judge(ctx, ctx.send(w.method, path), "X1", std::string(w.method) + " " + path, ctx.statuses().wrong_method, false);
}

// The bad tag's rules: it is refused with the error shape; a 200 is a MUST
// finding only for a MUST bad tag.
void bad_tag_refused(CheckContext& ctx, const BadTag& b) {
  const auto& range = ctx.target().dialect.minutes;
  auto params = b.params;
  std::string what = "POST " + tag_path(ctx.target().channel) + " " + b.what;
  if (b.bound != MinutesBound::none) {
    const auto minutes = b.bound == MinutesBound::zero ? 0 : range.max + 1;
    const std::string allowed = "the profile allows " + std::to_string(range.min) + " to " + std::to_string(range.max);
    if (range.contains(minutes)) ctx.skip("minutes=0 is a valid lifetime here (" + allowed + ")");
    params.push_back({"minutes", std::to_string(minutes), true});
    what = "POST " + tag_path(ctx.target().channel) + " with minutes=" + std::to_string(minutes) + " (" + allowed + ")";
  }
  judge(ctx, bad_tag(ctx, params, what), b.rules.front(), what, ctx.statuses().bad_input, b.severity == Severity::must);
}

// X1, X2: a database write without a value is refused, never a 5xx.
void database_post_without_value(CheckContext& ctx) {
  auto key = probe_key(ctx, "errors");
  judge(ctx, ctx.send("POST", database_path(key), {{"other", "x"}}), "X1",
        "POST " + database_path(key) + " without value", ctx.statuses().bad_input, false);
}

// One odd request's answer: nothing when it is right (a 200, or a refusal
// with the error shape), else what is wrong (a MUST). A protocol-level
// refusal of a malformed request is judged apart: its findings are SHOULDs.
std::optional<std::string> judge_odd(CheckContext& ctx, const core::Exchange& e, const std::string& what) {
  if (e.error == core::TransportError::malformed || e.error == core::TransportError::too_large)
    return what + ": expected an HTTP/1.1 answer, got " + describe_answer(e);
  if (!e.answered() || e.response->status == 200) return std::nullopt;
  const auto& r = *e.response;
  auto findings = oracle::error_shape_findings(r.status, r.header("Content-Type"), r.body);
  if (oracle::protocol_level_refusal(e.request.target, r.status, r.header("Content-Type"), r.body))
    findings = oracle::judged_apart(std::move(findings));
  std::optional<std::string> must;
  for (auto& f : findings) {
    f.text = what + ": " + f.text;
    if (f.severity == Severity::should) ctx.add(std::move(f));  // judged apart or not, as it came
    else if (!must) must = std::move(f.text);
  }
  return must;
}

// X1, X2: odd requests are answered or refused with the error shape, never
// with a 5xx. Every one is sent whatever the others got, so one answer
// cannot hide the rest.
void odd_requests(CheckContext& ctx) {
  auto key = probe_key(ctx, "errors");
  const std::string ch = tag_path(ctx.target().channel);
  std::vector<core::HttpRequest> odd{
      {"GET", database_path("") + "%zz%", {}, {}},
      {"GET", database_path(std::string(2000, 'k')), {}, {}},
      {"GET", agents_path() + "/%00", {}, {}},
      {"GET", agents_path() + "/" + std::string(300, '9'), {}, {}},
      {"POST", ch, {{"Content-Type", "application/json"}}, "{\"tag\": "},
      {"POST", ch, {{"Content-Type", "application/json"}}, "[1,2,3]"},
      {"POST", ch, {{"Content-Type", "application/x-www-form-urlencoded"}}, "tag=%zz&minutes=%"},
      {"POST", ch, {{"Content-Type", "text/plain"}}, "tag minutes"},
      {"POST", database_path(key), {{"Content-Type", "application/x-www-form-urlencoded"}}, "value=%ff%fe"},
      {"POST", database_path(key), {{"Content-Type", "application/json"}}, "{\"value\": 12}"},
  };
  std::vector<Finding> failed;  // MUST findings, in the order sent
  std::vector<std::string> unanswered;
  for (auto& r : odd) {
    const std::string what =
        r.method + " " + r.target.substr(0, 80) + (r.body.empty() ? "" : " with body " + oracle::excerpt(r.body, 40));
    auto e = ctx.send(r);
    if (auto drop = ctx.drop_problem(e)) failed.push_back({Severity::must, "X0", what + ": " + *drop});
    else if (auto problem = judge_odd(ctx, e, what)) failed.push_back({Severity::must, "X1", *problem});
    else if (!e.answered()) unanswered.push_back(what + ": " + describe_answer(e));
    else if (e.response->status == 200 && r.target == ch) untag_if_tagged(ctx, e);  // tagged after all
  }
  const std::string of = " (" + std::to_string(odd.size()) + " odd requests sent)";
  if (!failed.empty())
    ctx.fail(failed.front().rule, std::to_string(failed.size()) + " odd request(s) got a wrong answer or none" + of +
                                      "; first: " + failed.front().text +
                                      (failed.size() > 1 ? "; then: " + failed[1].text : ""));
  if (!unanswered.empty())
    ctx.indeterminate(std::to_string(unanswered.size()) + " odd request(s) got no answer" + of +
                      "; first: " + unanswered.front());
}

// X1, X2, C1: every error answer of the whole run has the documented error
// shape and a JSON Content-Type, and none is a 5xx (the readings are
// oracle::judge_answer's).
void every_error_answer(CheckContext& ctx) {
  // A framework refusal judged apart is reported on its own: under --strict
  // only the other SHOULD findings fail the check.
  std::optional<Finding> first_must, first_should, first_apart;
  std::size_t errors = 0, bad = 0;
  int cited = 0;
  for (const auto& r : ctx.run().recorded()) {
    const auto cls = oracle::status_class(r.status);
    if (cls != oracle::StatusClass::error && cls != oracle::StatusClass::server_error) continue;
    ++errors;
    bool found = false;
    for (auto& [aspect, f] : judge(r).findings) {
      using oracle::Aspect;
      if (aspect != Aspect::server_error && aspect != Aspect::error_shape && aspect != Aspect::content_type) continue;
      found = true;
      f.text = r.check + ": " + f.text;
      auto& slot = f.severity == Severity::must ? first_must : f.apart ? first_apart : first_should;
      if (!slot) slot = std::move(f);
    }
    if (!found) continue;
    ++bad;
    if (cited < 5) {
      ctx.cite(r);
      ++cited;
    }
  }
  const std::string expected = "expected every error answer to have the documented shape (" + std::to_string(bad) +
                               " of " + std::to_string(errors) +
                               " error answers of the run break the error shape; first: ";
  for (auto* f : {&first_apart, &first_should, &first_must})
    if (*f) {
      (*f)->text = expected + (*f)->text + ")";
      ctx.add(std::move(**f));
    }
}

// X0: every well-formed request of the whole run got an answer. A drop is
// counted only after the idempotent retry, and only once the network to the
// target was shown to work (some exchange was answered).
void every_request_answered(CheckContext& ctx) {
  const auto dropped = ctx.run().dropped();
  if (!ctx.run().answered_any)
    ctx.indeterminate("no request of the run got an answer: the network to the target may be down, so a dropped "
                      "connection says nothing about the target");
  for (std::size_t i = 0; i < dropped.size() && i < 5; ++i)
    ctx.cite(dropped[i]);
  if (!dropped.empty())
    ctx.fail("X0", "expected every well-formed request to get an answer; " + std::to_string(dropped.size()) +
                       " had their connection closed without one (idempotent ones also when sent again); first: " +
                       dropped.front().check + ": " + dropped.front().answer);
}

}  // namespace

void add_error_checks(std::vector<Check>& out) {
  const std::string s = "errors";
  out.push_back({.id = "errors.unknown-route",
                 .suite = s,
                 .rules = {"X1", "X2"},
                 .summary = "a path the API does not have is refused with a msg (404 expected)",
                 .body = unknown_route});
  for (const auto& w : wrong_methods())
    out.push_back(
        {.id = std::string("errors.wrong-method.") + w.name,
         .suite = s,
         .rules = {"X1", "X2"},
         .severity = Severity::should,
         .summary = std::string(w.method) + " on the " + w.name + " path is refused with a msg (405 or 404 expected)",
         .body = [&w](CheckContext& ctx) { wrong_method(ctx, w); }});
  for (const auto& b : bad_tags())
    out.push_back({.id = std::string("errors.tag.") + b.name,
                   .suite = s,
                   .rules = b.rules,
                   .severity = b.severity,
                   .summary = std::string("a tag request ") + b.what + " is refused with a msg (400 expected)",
                   .body = [&b](CheckContext& ctx) { bad_tag_refused(ctx, b); }});
  out.push_back({.id = "errors.database-post.missing-value",
                 .suite = s,
                 .rules = {"X1", "X2"},
                 .severity = Severity::should,
                 .summary = "a database POST without value is refused with a msg (400 expected)",
                 .body = database_post_without_value});
  out.push_back({.id = "errors.odd-requests",
                 .suite = s,
                 .rules = {"X0", "X1", "X2"},
                 .summary = "odd but well-formed requests never get a 5xx; refusals carry a msg",
                 .body = odd_requests});
  out.push_back(
      {.id = "errors.every-error-answer",
       .suite = s,
       .rules = {"X1", "X2", "C1"},
       .summary =
           "every error answer of the run: a 4xx status, a JSON object with a non-empty string msg, JSON Content-Type",
       .body = every_error_answer,
       .run_wide = true});
  out.push_back({.id = "errors.every-request-answered",
                 .suite = s,
                 .rules = {"X0"},
                 .summary = "every well-formed request of the run gets an answer: a connection closed without one "
                            "(idempotent requests: twice) is a crash",
                 .body = every_request_answered,
                 .run_wide = true});
}

}  // namespace crh::contracts::suites
