// The summary of a game being stored (its legality and signatures), shared by the games
// table's generated columns and its CHECK so that a row is replayed once.
#pragma once

#include "gamedb/game_search.h"
#include "pg_headers.h"

namespace pgmate::pg {

// The summary of the game given as (start board, moves move[]) in arguments 0 and 1.
const gamedb::GameSummary& game_summary_arg(FunctionCallInfo fcinfo);

}  // namespace pgmate::pg
