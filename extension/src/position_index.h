// The position index's setting (defined in position_index.cpp, registered in _PG_init), and
// what the explorer and the counts read of it.
#pragma once

#include <cstdint>
#include <functional>
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

// Keys in SQL: the sign bit flipped, so that signed order is the keys' unsigned order.
inline std::int64_t sql_key(std::uint64_t key) { return static_cast<std::int64_t>(key ^ (std::uint64_t{1} << 63)); }
inline std::uint64_t unsql_key(std::int64_t key) { return static_cast<std::uint64_t>(key) ^ (std::uint64_t{1} << 63); }

// For the explorer and the counts (SPI connected): the index's lock; the entries of one key
// in every block that holds some (first to last of each block), as the statement's snapshot
// sees them; every entry of the index in key order (under the exclusive lock).
void lock_position_index(bool exclusive);
void for_each_key_entry(std::uint64_t key,
                        const std::function<void(const gamedb::BlockView&, std::size_t first, std::size_t last)>& f);
void for_each_index_entry(const std::function<void(const gamedb::PositionEntry&)>& f);

}  // namespace pgmate::pg
