// Keeping the key out of what the harness shows, the right way round:
// redaction applies to what came from OUTSIDE (the target's bytes), never to
// the harness's own words and field names, so a key such as "k" or "test"
// cannot turn "skew" into "s$CRH_API_KEYew" or break a result document.
//
// The run's key is registered once, before any exchange (run_contract and the
// load's discovery do it); the functions below are safe from any thread after.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/json/fwd.hpp>

#include "core/http.hpp"

namespace crh::core {

void register_run_key(std::string_view key);  // the run's only key from now on ("": none)
// One more key redacted beside those registered: a load registers its
// target's this way, so two targets loaded side by side (crh load
// --against) keep both keys out of everything.
void add_run_key(std::string_view key);

// Bytes the target sent, fit to show: the run's key redacted in every
// encoding (core::Redactor), whatever its length.
std::string from_target(std::string_view text);
// ... and at most `max` bytes. Redaction comes first: a cut never leaves a
// prefix of the key. Says nothing about the cut; the caller does.
std::string from_target(std::string_view text, std::size_t max);

// An exchange's answer as a message shows it: "HTTP 200 (body: ...)", the
// body from the target (redacted, cut at 200 bytes, control bytes blanked),
// or why there was none.
std::string answer_text(const Exchange& x);

// A last line of defence for text the harness composed, which may quote the
// target somewhere: redacted when the key is long enough to match only
// itself (not key_is_short), else returned as it is.
std::string composed(std::string_view text);
// The same for every string VALUE of a document; names are never touched,
// so the document stays readable whatever the key is.
void redact_values(boost::json::value& document);

}  // namespace crh::core
