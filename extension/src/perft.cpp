// perft(board, depth) and perft_divide(board, depth); both poll for query cancel and
// statement_timeout every few milliseconds.
#include <vector>

#include "chess/notation.h"
#include "chess/perft.h"
#include "datum.h"

using namespace pgmate;

namespace {

constexpr int kMaxDepth = 15;

int depth_arg(FunctionCallInfo fcinfo, int n) {
  const int depth = PG_GETARG_INT32(n);
  if (depth < 0 || depth > kMaxDepth)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "perft depth " + std::to_string(depth) + " is out of range (0 to " + std::to_string(kMaxDepth) + ")");
  return depth;
}

}  // namespace

PGMATE_FUNCTION(board_perft) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  const int depth = depth_arg(fcinfo, 1);
  return Int64GetDatum(int64(chess::perft_polling(b, depth, pg::check_for_interrupts)));
}

// perft_divide(board, depth) -> SETOF (move move, nodes bigint)
PGMATE_FUNCTION(board_perft_divide) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  const int depth = depth_arg(fcinfo, 1);
  chess::MoveList list;
  chess::legal_moves(b, list);
  std::vector<std::uint64_t> nodes;
  for (chess::Move m : list) {
    chess::Board next = b;
    next.play<false>(m);
    nodes.push_back(depth == 0 ? 0 : chess::perft_polling(next, depth - 1, pg::check_for_interrupts));
  }
  if (depth == 0) list.size = 0;
  pg::pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (int i = 0; i < list.size; ++i) {
      Datum values[2] = {pg::move_to_datum(list.moves[i]), Int64GetDatum(int64(nodes[i]))};
      bool nulls[2] = {false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}
