// The rows a finished self-play or arena game leaves in pgmate's tables, written once for
// the procedures (SPI, typed parameters) and the clients (libpq, text parameters that take
// their columns' types): the statements, their parameters' order, and the tags' JSON. The
// date of a stored game is the server's (current_date) whoever stores it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pgmate::rows {

// A self-play game: $1 round, $2 the player (White and Black), $3 result, $4 termination,
// $5 start board, $6 moves, $7 network id (0: none), $8 the self-play parameters (jsonb).
// Returns the game's id.
inline constexpr const char* kInsertSelfplayGame =
    "INSERT INTO pgmate.games (source, event, date, round, white, black, result, termination, start, moves,"
    "                          network_id, selfplay)"
    " VALUES ('selfplay', 'pgmate self-play', to_char(current_date, 'YYYY.MM.DD'), $1, $2, $2, $3, $4, $5, $6,"
    "         NULLIF($7::bigint, 0), $8::jsonb)"
    " RETURNING id";

// A match: $1 name, $2 player A (jsonb), $3 player B (jsonb), $4 options (jsonb), $5 games.
// Returns its id.
inline constexpr const char* kInsertMatch =
    "INSERT INTO pgmate.matches (name, a, b, options, games) VALUES ($1, $2::jsonb, $3::jsonb, $4::jsonb, $5)"
    " RETURNING id";

// An arena game: $1 event, $2 round, $3 White, $4 Black, $5 result, $6 termination, $7 start
// board, $8 moves, $9 tags (jsonb), $10 match id, $11 the arena's record of it (jsonb).
inline constexpr const char* kInsertArenaGame =
    "INSERT INTO pgmate.games (source, event, date, round, white, black, result, termination, start, moves, tags,"
    "                          match_id, arena)"
    " VALUES ('arena', $1, to_char(current_date, 'YYYY.MM.DD'), $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10,"
    "         $11::jsonb)";

// An arena game's PGN tags as kInsertArenaGame takes them: the JSON object of all of them,
// and the four that are columns of their own.
struct ArenaGameTags {
  std::string json, event, round, white, black;
};
ArenaGameTags arena_game_tags(const std::vector<std::pair<std::string, std::string>>& tags);

}  // namespace pgmate::rows
