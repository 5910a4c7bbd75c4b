// A contract result document as contracts::result_document writes it, for
// the report tests: two suites, one check of each outcome, a rule of each
// kind and hostile text (markup, quotes, a control byte) in the failure.
#pragma once

#include <boost/json.hpp>

namespace crh::test {

inline boost::json::value crafted_contract_result() {
  namespace json = boost::json;
  return json::parse(R"json({
    "schema": "crh.result", "schema_version": 1, "kind": "contract",
    "tool": {"name": "crh", "version": "0.1.0"},
    "started_at": "2024-05-01T12:34:56Z",
    "duration_ms": 2500.0,
    "target": {"base_url": "http://127.0.0.1:18080", "channel": "1", "embedded": false},
    "config": {"suites": [], "checks": [], "slow": false, "strict": false, "minute_ms": 60000,
               "timeout_ms": 5000, "profile": {}},
    "verdict": {"status": "failed", "exit_code": 1, "reason": "1 check(s) failed"},
    "counts": {"total": 5, "pass": 1, "warn": 1, "fail": 1, "skip": 1, "indeterminate": 1},
    "notes": ["the profile expects form-encoded parameters"],
    "suites": [
      {"name": "endpoints", "counts": {"total": 3, "pass": 1, "warn": 1, "fail": 1, "skip": 0, "indeterminate": 0}},
      {"name": "binding", "counts": {"total": 2, "pass": 0, "warn": 0, "fail": 0, "skip": 1, "indeterminate": 1}}
    ],
    "rules": [
      {"id": "E8", "section": "4", "text": "POST /channels/[id]/alias-numbers/tag tags an alias and returns it",
       "outcome": "fail", "checks": [{"id": "endpoints.tag", "outcome": "fail", "severity": "MUST"}]},
      {"id": "E1", "section": "4", "text": "GET /api/v1/local-agents lists the local agents",
       "outcome": "pass", "checks": [{"id": "endpoints.agents-list", "outcome": "pass", "severity": "MUST"}]},
      {"id": "B1", "section": "1", "text": "any caller may call a newly tagged alias",
       "outcome": "uncovered", "checks": []}
    ],
    "checks": [
      {"id": "endpoints.agents-list", "suite": "endpoints",
       "summary": "GET /api/v1/local-agents answers 200 with a JSON list of agents",
       "rules": ["E1", "C1"], "severity": "MUST", "outcome": "pass", "message": "", "duration_ms": 12.0,
       "findings": [],
       "evidence": [{"curl": "curl -sS -H 'Apikey: $CRH_API_KEY' http://127.0.0.1:18080/api/v1/local-agents",
                     "answer": "HTTP 200 [{\"id\":1}]", "elapsed_ms": 1.5}]},
      {"id": "endpoints.version-prefix-only", "suite": "endpoints",
       "summary": "the agent list is not also served without /api/v1",
       "rules": ["V1"], "severity": "SHOULD", "outcome": "warn", "message": "GET /local-agents also answers 200",
       "duration_ms": 30.0,
       "findings": [{"severity": "SHOULD", "rule": "V1", "text": "GET /local-agents also answers 200"}],
       "evidence": [{"curl": "curl -sS -H 'Apikey: $CRH_API_KEY' http://127.0.0.1:18080/local-agents",
                     "answer": "HTTP 200 []", "elapsed_ms": 1.0}]},
      {"id": "endpoints.tag", "suite": "endpoints",
       "summary": "POST /channels/[id]/alias-numbers/tag answers 200 with the tagged alias",
       "rules": ["E8", "C1", "C2"], "severity": "MUST", "outcome": "fail",
       "message": "tag answered <html> & \"oops\" \u0001 end", "duration_ms": 250.0,
       "findings": [{"severity": "MUST", "rule": "E8", "text": "tag answered <html> & \"oops\" \u0001 end"},
                    {"severity": "MUST", "rule": "C1", "text": "the body is not JSON"}],
       "evidence": [{"curl": "curl -sS -X POST -H 'Apikey: $CRH_API_KEY' --data 'tag=crh-1&minutes=5' http://127.0.0.1:18080/channels/1/alias-numbers/tag",
                     "answer": "HTTP 500 <b>boom</b>", "elapsed_ms": 2.0}]},
      {"id": "binding.race", "suite": "binding", "summary": "two callers race for a tagged alias",
       "rules": ["B2"], "severity": "MUST", "outcome": "skip", "message": "the target has no call hook",
       "duration_ms": 0.0, "findings": [], "evidence": []},
      {"id": "binding.bound-caller", "suite": "binding", "summary": "only the bound caller may call",
       "rules": ["B3"], "severity": "MUST", "outcome": "indeterminate",
       "message": "no answer within 5000 ms", "duration_ms": 5001.0, "findings": [],
       "evidence": [{"curl": "curl -sS -X POST -H 'Apikey: $CRH_API_KEY' --data 'caller=c1' http://127.0.0.1:18080/channels/1/alias-numbers/3/calls",
                     "answer": "no answer: timeout", "elapsed_ms": 5000.0}]}
    ]
  })json");
}

// The crafted result as `crh contract` writes it since issue 22: config.rerun
// records the options a rerun needs (a path with a space and a quote among
// them) and that the key comes from that file.
inline boost::json::value crafted_contract_with_rerun() {
  namespace json = boost::json;
  auto doc = crafted_contract_result();
  doc.at("config").as_object()["rerun"] = json::parse(R"json({
    "options": ["--base-url", "http://127.0.0.1:18080", "--channel", "1", "--profile", "/tmp/a dir/it's.json",
                "--api-key-file", "/tmp/key file", "--minute-ms", "1000", "--timeout", "3000", "--slow", "--strict"],
    "key_source": "file"
  })json");
  return doc;
}

// The rerun command crafted_contract_with_rerun() records, for check `id`, as a shell reads it.
inline const char* kCraftedRerunPrefix =
    "crh contract --base-url http://127.0.0.1:18080 --channel 1 --profile '/tmp/a dir/it'\\''s.json' "
    "--api-key-file '/tmp/key file' --minute-ms 1000 --timeout 3000 --slow --strict --check ";

}  // namespace crh::test
