#include "results/verdict.hpp"

#include <array>
#include <utility>

namespace crh::results {
namespace {

constexpr std::array<std::pair<Status, std::string_view>, 7> kNames{{
    {Status::passed, "passed"},
    {Status::failed, "failed"},
    {Status::incomplete, "incomplete"},
    {Status::unreachable, "unreachable"},
    {Status::untested, "untested"},
    {Status::inconclusive, "inconclusive"},
    {Status::unreliable, "unreliable"},
}};

}  // namespace

ExitCode exit_code_of(Status s) {
  switch (s) {
    case Status::passed: return kExitOk;
    case Status::failed:
    case Status::incomplete: return kExitFailed;
    case Status::unreachable:
    case Status::untested: return kExitUnreachable;
    case Status::inconclusive:
    case Status::unreliable: return kExitCouldNotTell;
  }
  return kExitFailed;  // not reached: every status is named above
}

std::string_view to_string(Status s) {
  for (const auto& [status, name] : kNames)
    if (status == s) return name;
  return "failed";  // not reached
}

std::optional<Status> status_from(std::string_view word) {
  for (const auto& [status, name] : kNames)
    if (name == word) return status;
  return std::nullopt;
}

}  // namespace crh::results
