// The position index's setting (defined in position_index.cpp, registered in _PG_init).
#pragma once

#include <span>
#include <string_view>

#include "gamedb/position_index.h"

namespace pgmate::pg {

// pgmate.position_index_deferred_merges: inserts leave their runs unmerged (a bulk import
// merges once at its end with pgmate.position_index_merge()).
extern bool position_index_deferred_merges;

// The index entries of a game whose summary a row's generated columns or CHECK have just
// computed (game_search.cpp: the same replay), with the game's bytes (the packed start, then
// the moves' 16-bit values; game 0, result unknown), for the insert trigger to take instead
// of replaying each game once more: it takes them in the order the rows came, each only
// for exactly the same bytes, so nothing kept can be taken for another game. Bounded, and
// emptied at the end of each statement's trigger and of each transaction.
void remember_game_entries(std::string_view game_bytes, std::span<const gamedb::PositionEntry> entries);

}  // namespace pgmate::pg
