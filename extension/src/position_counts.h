// The explorer's per-position counts (extension/sql/82_position_index.sql): for each position
// reached by at least min_games games when they were last refreshed, the games by move,
// speed, rating band and month (core/gamedb/position_counts.h), in pgmate.position_counts.
// The index's trigger keeps them in the same transaction as the index; a bulk import
// (pgmate.position_index_deferred_merges) marks them stale instead, and its end refreshes
// them. Only this code writes them, as the extension's owner.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gamedb/position_counts.h"
#include "gamedb/position_index.h"
#include "pg_headers.h"

namespace pgmate::pg::counts {

// pgmate.explorer_counts: off makes the explorer read the games even where counts are kept.
extern bool explorer_counts;

// The players' average rating of a game row `g` as SQL: the WhiteElo and BlackElo tags of one
// to four digits, one of them when the other is missing. The explorer's filters and the
// counts read the same expression.
extern const char* const kAverageRatingSql;

// "SELECT g.id, g.start, g.moves, g.result, g.speed, <rating>, g.date FROM <from>": the
// games as the index reads them (columns 1 to 4), with what the counts know of them.
std::string games_with_facts(const std::string& from);

// The facts of an SPI row of games_with_facts (columns 1 and 5 to 7).
gamedb::GameFacts facts_of_row(HeapTuple row, TupleDesc desc);

// For a statement that changes games, with the index's lock held: whether its games change
// counts (counts are kept and not stale). Reads the state FOR SHARE, so that a transaction
// whose snapshot predates a refresh fails (40001) rather than missing it, and loads the
// counted keys when a refresh changed them.
bool maintained();
// A bulk import's statement: the counts are stale (the explorer reads the games) until
// refresh(); nothing when no position is counted.
void mark_stale();
// Adds (sign 1) or takes away (-1) the games' entries (sorted by key) at the counted keys;
// `facts` holds every game of the entries, sorted by game.
void apply(std::span<const gamedb::PositionEntry> entries, std::vector<gamedb::GameFacts>& facts, int sign);
// Every game gone (TRUNCATE): no position counted.
void clear();
// Counts again every position reached by min_games games or more (the stored number when
// nullopt), from the index and pgmate.games, under the index's exclusive lock; returns the
// positions counted.
std::int64_t refresh(std::optional<int> min_games);

// The position's counts for a search, when they are kept, not stale, and the caller may read
// them (else the explorer reads the games).
std::optional<gamedb::PositionCounts> read(std::uint64_t key);

}  // namespace pgmate::pg::counts
