// Material and pattern search (extension/sql/84_game_search.sql): thin wrappers around
// core/gamedb/game_search. The scans are plain functions over (start, moves), parallel
// safe, so PostgreSQL spreads a search over every core.
#include <vector>

#include "chess/fen.h"
#include "datum.h"
#include "gamedb/game_search.h"
#include "guard.h"
#include "pg_headers.h"

using namespace pgmate;

namespace {

std::vector<chess::Move> moves_arg(FunctionCallInfo fcinfo, int n) {
  std::vector<chess::Move> moves;
  for (Datum d : pg::array_elements(fcinfo, n, "moves")) moves.push_back(pg::move_from_datum(d));
  return moves;
}

}  // namespace

// material(board) -> text: "KRPvKR".
PGMATE_FUNCTION(board_material) {
  return pg::text_datum(gamedb::Material::of(pg::board_arg(fcinfo, 0)).text());
}

// matches_pattern(board, pattern text) -> bool: the sub-FEN pattern holds on the board.
PGMATE_FUNCTION(matches_pattern) {
  const gamedb::Pattern pattern = gamedb::Pattern::parse(pg::text_arg(fcinfo, 1));
  return BoolGetDatum(pattern.matches(pg::board_arg(fcinfo, 0)));
}

// reaches_material(start, moves, material text) -> bool: some position of the game has it.
PGMATE_FUNCTION(reaches_material) {
  const gamedb::Material material = gamedb::Material::parse(pg::text_arg(fcinfo, 2));
  return BoolGetDatum(gamedb::reaches_material(pg::board_arg(fcinfo, 0), moves_arg(fcinfo, 1), material));
}

// material_signature(start, moves) -> bigint: pgmate.games.material_signature; NULL for a
// game with an illegal move, so that the table's CHECK reports it as before.
PGMATE_FUNCTION(material_signature) {
  try {
    return Int64GetDatum(
        static_cast<std::int64_t>(gamedb::material_signature(pg::board_arg(fcinfo, 0), moves_arg(fcinfo, 1))));
  } catch (const chess::IllegalMove&) {
    PG_RETURN_NULL();
  }
}

// may_reach_material(signature bigint, material text) -> bool: false when the game's
// material summary rules the material out (no replay needed).
PGMATE_FUNCTION(may_reach_material) {
  const gamedb::Material material = gamedb::Material::parse(pg::text_arg(fcinfo, 1));
  return BoolGetDatum(gamedb::may_reach(static_cast<std::uint64_t>(PG_GETARG_INT64(0)), material));
}

// reaches_pattern(start, moves, pattern text) -> bool: some position of the game matches.
PGMATE_FUNCTION(reaches_pattern) {
  const gamedb::Pattern pattern = gamedb::Pattern::parse(pg::text_arg(fcinfo, 2));
  return BoolGetDatum(gamedb::reaches_pattern(pg::board_arg(fcinfo, 0), moves_arg(fcinfo, 1), pattern));
}
