// The gate after an arena round and what a veto escalates: pure, so both are tested on
// their own (pgmate.learning_gate and pgmate.learning_escalation are these).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "learning/settings.h"

namespace pgmate::learning {

// A match's result from the candidate's side, as far as the gate reads it.
struct MatchOutcome {
  std::optional<double> score, los;
  std::string sprt;  // H0, H1, continue, or empty without an SPRT
};
MatchOutcome match_outcome(const JsonObject& result);

// - "vetoed" when a match (the one against the best included) has an LOS below veto_los,
//   or with veto_threshold a score below it;
// - else "promoted" when the best match's LOS is at least promotion_los (a one-sided test
//   at the 1 - promotion_los level, docs/learning.md "The gate"); with promotion_threshold,
//   when its score is at least that; with promotion_elo1, when its SPRT accepted H1;
// - else "kept".
std::string gate_decision(const MatchOutcome& best, const std::vector<MatchOutcome>& vetoes, const JsonObject& settings);

// What a veto at each escalation level does on top of restoring the best network (with a
// fresh optimizer): level 1 excludes the newest 25% of the window's games and raises the
// pretraining share by 20 points; level 2 halves the learning rate; level 3 has the
// current network play 30% of self-play games; level 4 excludes 50% and sets the share to
// 80%. A promotion undoes it all.
// The reason of a decision after an arena round, as pgmate.learning_iterations keeps it:
// the match against the best network (score, Elo with its interval, LOS, games), the rule
// that decides, and the scores against an older best (`older`, network `older_network`) and
// the start network when they were played (nullptr: not).
std::string arena_reason(const JsonObject& best, const JsonObject* older, std::int64_t older_network,
                         const JsonObject* start, const JsonObject& settings);

struct Escalation {
  double exclude_share, new_pretrain_mix, new_lr, new_current_share;
};
Escalation escalation(int level, double pretrain_mix, double lr, double current_share);

}  // namespace pgmate::learning
