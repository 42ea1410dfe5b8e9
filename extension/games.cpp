// Games as rows: the positions and keys along a game (position search uses the keys
// with a GIN index), and PGN in and out.
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/notation.h"
#include "datum.h"

using namespace pgmate;

namespace {

// Plays `moves` from `start`, calling visit(ply, board_before, move) for each move and
// visit(n, final_board, null move) at the end. An illegal move is an error naming it.
template <class Visit>
void walk_game(const chess::Board& start, const std::vector<Datum>& moves, Visit&& visit) {
  chess::Board b = start;
  for (size_t i = 0; i < moves.size(); ++i) {
    chess::Move m;
    try {
      m = chess::resolve_move(b, pg::move_from_datum(moves[i]));
    } catch (const chess::ParseError& e) {
      throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                         "move " + std::to_string(i + 1) + " of " + std::to_string(moves.size()) + ": " + e.what());
    }
    visit(int(i), b, m);
    b.play(m);
  }
  visit(int(moves.size()), b, chess::Move());
}

}  // namespace

// game_positions(start board, moves move[]) -> SETOF (ply int, board board, move move, san text)
// One row per position, ply 0 = start; move/san is the move played from it (NULL at the end).
PGMATE_FUNCTION(game_positions) {
  const chess::Board start = pg::board_arg(fcinfo, 0);
  const std::vector<Datum> moves = pg::array_elements(fcinfo, 1, "moves");
  struct Row {
    chess::Board board;
    chess::Move move;
    std::string san;
  };
  std::vector<Row> rows;
  rows.reserve(moves.size() + 1);
  walk_game(start, moves, [&](int, const chess::Board& b, chess::Move m) {
    rows.push_back({b, m, m.is_null() ? std::string() : chess::to_san(b, m)});
  });
  pg::pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (size_t i = 0; i < rows.size(); ++i) {
      const bool last = rows[i].move.is_null();
      Datum values[4] = {Int32GetDatum(int32(i)), pg::board_to_datum(rows[i].board),
                         last ? Datum(0) : pg::move_to_datum(rows[i].move),
                         last ? Datum(0) : CStringGetTextDatum(rows[i].san.c_str())};
      bool nulls[4] = {false, false, last, last};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}

// game_keys(start board, moves move[]) -> bigint[]: the Polyglot key of every position.
PGMATE_FUNCTION(game_keys) {
  const chess::Board start = pg::board_arg(fcinfo, 0);
  const std::vector<Datum> moves = pg::array_elements(fcinfo, 1, "moves");
  std::vector<Datum> keys;
  keys.reserve(moves.size() + 1);
  walk_game(start, moves, [&](int, const chess::Board& b, chess::Move) {
    keys.push_back(Int64GetDatum(static_cast<int64>(b.key)));
  });
  return pg::make_array(keys, INT8OID);
}

// is_valid_game(start, moves): every move legal in turn (the games table's CHECK).
PGMATE_FUNCTION(game_is_valid) {
  chess::Board b = pg::board_arg(fcinfo, 0);
  for (Datum d : pg::array_elements(fcinfo, 1, "moves")) {
    try {
      b.play(chess::resolve_move(b, pg::move_from_datum(d)));
    } catch (const chess::ParseError&) {
      return BoolGetDatum(false);
    }
  }
  return BoolGetDatum(true);
}
