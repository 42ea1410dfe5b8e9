// Pictures of a board: board_diagram (Unicode text) and board_svg (an SVG image).
#include "chess/notation.h"
#include "chess/render.h"
#include "datum.h"

using namespace pgmate;

PGMATE_FUNCTION(render_board_diagram) { return pg::text_datum(chess::board_diagram(pg::board_arg(fcinfo, 0))); }

// board_svg(board, last_move move DEFAULT NULL): the last move is highlighted when given;
// it must be legal on the board it leads from, so it is only checked for its squares here.
PGMATE_FUNCTION(render_board_svg) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  const chess::Board b = pg::board_arg(fcinfo, 0);
  const chess::Move last = PG_ARGISNULL(1) ? chess::Move() : pg::move_arg(fcinfo, 1);
  return pg::text_datum(chess::board_svg(b, last));
}
