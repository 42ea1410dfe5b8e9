// The people, places and dates of generated games: a fixed pool of players (names and
// ratings, the same for every seed, so one player's games can be found across corpora),
// events with their sites, and dates spread over years.
#pragma once

#include <string>

#include "chess/pgn.h"
#include "common/random.h"

namespace pgmate::chess {

struct SyntheticPlayer {
  std::string name;  // "Surname, Given", unique in the pool
  int rating;        // 1200-2800, roughly normal around 1850
};

inline constexpr int kSyntheticPlayers = 4096;

// The pool, by rating rank: 0 is the lowest rated. Built once, the same on every call.
const SyntheticPlayer& synthetic_player(int rank);

struct GameHeader {
  PgnTags tags;  // Event, Site, Date, Round, White, Black, WhiteElo, BlackElo
  int white_elo;
  int black_elo;
};

// A game's tags, drawn from rng: two players of similar strength (as at an open
// tournament), their ratings on the day (the pool's rating within +-20), an event in
// a city, a date between first_year and last_year.
GameHeader synthetic_header(mcts::Rng& rng, int first_year, int last_year);

}  // namespace pgmate::chess
