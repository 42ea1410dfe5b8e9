// The piece move tables of the SQL cross-join tradition, and the 8x8 matrix views.
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/geometry.h"
#include "datum.h"

using namespace pgmate;

namespace {

// An int[8][8]: row 1 = rank 8, column 1 = file a.
Datum matrix_datum(const chess::SquareMatrix& m) {
  std::vector<Datum> cells;
  for (const auto& row : m)
    for (int v : row) cells.push_back(Int32GetDatum(v));
  return pg::pg_call([&] {
    int dims[2] = {8, 8}, lower[2] = {1, 1};
    return PointerGetDatum(construct_md_array(cells.data(), nullptr, 2, dims, lower, INT4OID, 4, true, 'i'));
  });
}

}  // namespace

// move_table(piece text DEFAULT NULL) -> SETOF (piece, from_square, to_square, squares_crossed)
// NULL is every piece; '' is an unknown piece (22023), as in move_mask.
PGMATE_FUNCTION(geometry_move_table) {
  const std::vector<chess::GeometricMove> moves =
      PG_ARGISNULL(0) ? chess::move_table() : chess::move_table(pg::text_arg(fcinfo, 0));
  pg::pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (const chess::GeometricMove& m : moves) {
      const char from[3] = {char('a' + chess::file_of(m.from)), char('1' + chess::rank_of(m.from)), 0};
      const char to[3] = {char('a' + chess::file_of(m.to)), char('1' + chess::rank_of(m.to)), 0};
      Datum values[4] = {CStringGetTextDatum(m.piece.c_str()), CStringGetTextDatum(from), CStringGetTextDatum(to),
                         Int32GetDatum(m.squares_crossed)};
      bool nulls[4] = {false, false, false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}

PGMATE_FUNCTION(geometry_move_mask) {
  return matrix_datum(chess::move_mask(pg::text_arg(fcinfo, 0), pg::square_arg(fcinfo, 1)));
}

PGMATE_FUNCTION(geometry_attack_mask) {
  return matrix_datum(chess::attack_mask(pg::board_arg(fcinfo, 0), pg::square_arg(fcinfo, 1)));
}
