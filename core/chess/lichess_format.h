// A generated game written as lichess's database exports it (database.lichess.org): the
// tags of a rated online game (Event "Rated Blitz game", Site https://lichess.org/ID, UTC date
// and time, ratings and rating changes, TimeControl, Termination), a [%clk] comment after
// every move of a timed game, and on a share of games (about 1 in 16, as on lichess, where
// players ask for computer analysis) an [%eval] before it. The clocks and evaluations are
// drawn, not played or searched: they follow lichess's format exactly, not chess truth.
// No lichess file is used or copied; the format is lichess's documented one.
#pragma once

#include <cstdint>
#include <string>

#include "chess/game_generator.h"

namespace pgmate::chess {

// Game `index` of corpus `seed` (generate_game's) as lichess PGN; depends on (seed, index)
// alone.
std::string lichess_pgn(const GeneratedGame& game, std::uint64_t seed, std::uint64_t index);

}  // namespace pgmate::chess
