// The load's texts from the command line (`crh load`, `crh run`): the mix of
// the mixed scenario and the open-loop rate.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loadgen/engine.hpp"

namespace crh::loadgen {

// Every endpoint; each tag is deleted again, so the target ends as found.
inline constexpr std::string_view kDefaultMix =
    "list-agents=10,get-agent=20,snooze=5,wake=5,db-get=20,db-set=10,list-aliases=15,tag=10,call=5";

// "op=weight,...". Throws std::invalid_argument naming the bad item.
std::vector<MixEntry> parse_mix(std::string_view text);

// "500" or "500/s"; "0" is the closed loop (so a fixed command line, such as a
// Kubernetes manifest's, can leave the rate out). Throws std::invalid_argument.
double parse_rate(std::string text);

}  // namespace crh::loadgen
