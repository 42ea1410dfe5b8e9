#include "learning/gate.h"

#include <algorithm>
#include <cstdlib>

namespace pgmate::learning {

namespace {

// A number of an object, absent when the key is missing or not a number (a NULL in SQL,
// which decides nothing).
std::optional<double> number_in(const JsonObject& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->second.type == JsonType::Null) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(it->second.text.c_str(), &end);
  if (end == it->second.text.c_str()) return std::nullopt;
  return x;
}

// A member as SQL's ->> gives it ("" for NULL, as format's %s writes one), or rounded as
// round(x::numeric, places) prints it.
std::string text_in(const JsonObject& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->second.type == JsonType::Null ? "" : it->second.text;
}
std::string rounded_in(const JsonObject& object, const char* key, int places) {
  const std::string text = text_in(object, key);
  return text.empty() ? "" : round_decimal_literal(text, places);
}

bool below(const std::optional<double>& x, const std::optional<double>& limit) { return x && limit && *x < *limit; }

}  // namespace

MatchOutcome match_outcome(const JsonObject& result) {
  MatchOutcome m;
  m.score = number_in(result, "score");
  m.los = number_in(result, "los");
  if (const auto it = result.find("sprt"); it != result.end()) m.sprt = it->second.text;
  return m;
}

std::string gate_decision(const MatchOutcome& best, const std::vector<MatchOutcome>& vetoes, const JsonObject& settings) {
  const bool by_score = settings.count("veto_threshold") > 0;
  const auto veto_limit = number_in(settings, by_score ? "veto_threshold" : "veto_los");
  std::vector<MatchOutcome> all = vetoes;
  all.push_back(best);
  for (const auto& m : all)
    if (below(by_score ? m.score : m.los, veto_limit)) return "vetoed";
  bool promoted = false;
  if (settings.count("promotion_elo1")) {
    promoted = best.sprt == "H1";
  } else if (settings.count("promotion_threshold")) {
    const auto threshold = number_in(settings, "promotion_threshold");
    promoted = best.score && threshold && *best.score >= *threshold;
  } else {
    const auto threshold = number_in(settings, "promotion_los");
    promoted = best.los && threshold && *best.los >= *threshold;
  }
  return promoted ? "promoted" : "kept";
}

std::string arena_reason(const JsonObject& best, const JsonObject* older, std::int64_t older_network,
                         const JsonObject* start, const JsonObject& settings) {
  std::string reason = "score " + rounded_in(best, "score", 3) + ", Elo " + rounded_in(best, "elo", 1) + " [" +
                       rounded_in(best, "elo_lower", 1) + ", " + rounded_in(best, "elo_upper", 1) + "], LOS " +
                       rounded_in(best, "los", 3) + " against the best network over " + text_in(best, "games") +
                       " games";
  const bool sprt = settings.count("promotion_elo1") > 0;
  if (sprt) {
    const std::string verdict = text_in(best, "sprt");
    reason += ", SPRT [" + text_in(settings, "promotion_elo0") + ", " + text_in(settings, "promotion_elo1") + "]: " +
              (verdict == "H1" ? "H1 accepted" : verdict == "H0" ? "H0 accepted" : "undecided");
  } else if (settings.count("promotion_threshold")) {
    reason += " (promotion at a score of " + text_in(settings, "promotion_threshold");
  } else {
    reason += " (promotion at LOS " + text_in(settings, "promotion_los");
  }
  reason += sprt ? " (" : ", ";
  reason += settings.count("veto_threshold") ? "veto below a score of " + text_in(settings, "veto_threshold") + ")"
                                             : "veto below LOS " + text_in(settings, "veto_los") + ")";
  if (older)
    reason += ", " + rounded_in(*older, "score", 3) + " against older network " + std::to_string(older_network);
  if (start) reason += ", " + rounded_in(*start, "score", 3) + " against the start network";
  return reason;
}

Escalation escalation(int level, double pretrain_mix, double lr, double current_share) {
  Escalation e{0, pretrain_mix, lr, current_share};
  if (level == 1) {
    e.exclude_share = 0.25;
    e.new_pretrain_mix = std::min(pretrain_mix + 0.2, 0.95);
  } else if (level == 4) {
    e.exclude_share = 0.5;
    e.new_pretrain_mix = std::max(pretrain_mix, 0.8);
  }
  if (level == 2) e.new_lr = lr / 2;
  if (level == 3) e.new_current_share = 0.3;
  return e;
}

}  // namespace pgmate::learning
