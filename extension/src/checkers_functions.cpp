// American checkers in SQL: legal moves, perft, play, status and pictures, under the same
// names as the chess functions (overloaded on checkers_board).
//
// `rule` is 'any' (the American rule: any capture sequence, each completed) or 'longest'
// (only the sequences taking the most pieces). A move that is not legal on the board is
// an error 22023 naming the move and the position; text that is not a move at all, 22P02.
#include <cstdint>
#include <string>
#include <vector>

#include "checkers/notation.h"
#include "checkers/perft.h"
#include "checkers/render.h"
#include "checkers/svg.h"
#include "checkers_datum.h"
#include "common/text.h"
#include "worker_link.h"

using namespace pgmate;
using pgmate::pg::pg_call;

namespace {

constexpr int kMaxDepth = 15;  // as chess perft

int depth_arg(FunctionCallInfo fcinfo, int n) {
  const int depth = PG_GETARG_INT32(n);
  if (depth < 0 || depth > kMaxDepth)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "perft depth " + std::to_string(depth) +
                                                            " is out of range (0 to " + std::to_string(kMaxDepth) + ")");
  return depth;
}

// The legal move of b (under rule) that `wanted` (board-free) names; 22023 naming the move
// and the position when there is none.
checkers::Move resolve(const checkers::Board& b, const checkers::Move& wanted, checkers::CaptureRule rule) {
  checkers::MoveList list;
  checkers::legal_moves(b, list, rule);
  for (const checkers::Move& m : list)
    if (pg::same_checkers_move(m, wanted)) return m;
  // parse_move explains why (no piece there, a capture is mandatory, ...). It can only
  // succeed where the start and end alone name a legal jump along another path.
  const std::string text = checkers::to_text(wanted);
  std::string message;
  try {
    checkers::parse_move(b, text, rule);
    message = "illegal move \"" + text + "\" in " + checkers::to_fen(b) + ": no legal capture sequence follows that path";
  } catch (const checkers::ParseError& e) {
    message = e.what();
  }
  throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, message);
}

}  // namespace

// ---------------------------------------------------------------- positions

PGMATE_FUNCTION(checkers_side_to_move) {
  return pg::text_datum(pg::checkers_board_arg(fcinfo, 0).side == checkers::kWhite ? "white" : "black");
}

// ongoing, black_wins or white_wins (the side to move has lost when it cannot move).
PGMATE_FUNCTION(checkers_status) {
  switch (checkers::status(pg::checkers_board_arg(fcinfo, 0))) {
    case checkers::Status::kBlackWins: return pg::text_datum("black_wins");
    case checkers::Status::kWhiteWins: return pg::text_datum("white_wins");
    case checkers::Status::kOngoing: break;
  }
  return pg::text_datum("ongoing");
}

PGMATE_FUNCTION(checkers_play) {
  checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const checkers::CaptureRule rule = pg::capture_rule_arg(fcinfo, 2);
  b.play(resolve(b, pg::checkers_move_arg(fcinfo, 1), rule));
  return pg::checkers_board_to_datum(b);
}

PGMATE_FUNCTION(checkers_play_moves) {
  checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const checkers::CaptureRule rule = pg::capture_rule_arg(fcinfo, 2);
  const std::vector<Datum> moves = pg::array_elements(fcinfo, 1, "moves");
  for (size_t i = 0; i < moves.size(); ++i) {
    try {
      b.play(resolve(b, pg::checkers_move_from_datum(moves[i]), rule));
    } catch (const pg::SqlError& e) {
      throw pg::SqlError(e.sqlstate(),
                         "move " + std::to_string(i + 1) + " of " + std::to_string(moves.size()) + ": " + e.what());
    }
  }
  return pg::checkers_board_to_datum(b);
}

// play(checkers_board, text): numeric notation; a jump may name only its start and end
// when one legal sequence joins them. Also what a bare literal resolves to.
PGMATE_FUNCTION(checkers_play_text) {
  checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const std::string text = pg::text_arg(fcinfo, 1);
  const checkers::CaptureRule rule = pg::capture_rule_arg(fcinfo, 2);
  b.play(checkers::parse_move(b, text, rule));  // malformed text 22P02, an illegal move 22023
  return pg::checkers_board_to_datum(b);
}

// ---------------------------------------------------------------- moves

// move(checkers_board, text): the legal move the text names, in board-free form.
PGMATE_FUNCTION(checkers_move_parse) {
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const std::string text = pg::text_arg(fcinfo, 1);
  const checkers::CaptureRule rule = pg::capture_rule_arg(fcinfo, 2);
  return pg::checkers_move_to_datum(checkers::parse_move(b, text, rule));
}

// legal_moves(checkers_board, rule) -> SETOF (move, notation, captures, crowns), in
// notation order (start square, then landing squares, as PDN numbers).
PGMATE_FUNCTION(checkers_legal_moves) {
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const std::vector<checkers::Move> moves = checkers::sorted_legal_moves(b, pg::capture_rule_arg(fcinfo, 1));
  // Every C++ call that may throw happens before the block run under pg_call.
  std::vector<std::string> texts;
  std::vector<Datum> datums;
  for (const checkers::Move& m : moves) {
    texts.push_back(checkers::to_text(m));
    datums.push_back(pg::checkers_move_to_datum(m));
  }
  pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (size_t i = 0; i < moves.size(); ++i) {
      Datum values[4] = {datums[i], CStringGetTextDatum(texts[i].c_str()),
                         Int32GetDatum(moves[i].captures), BoolGetDatum(moves[i].crowns != 0)};
      bool nulls[4] = {false, false, false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}

PGMATE_FUNCTION(checkers_legal_move_count) {
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  return Int32GetDatum(int32(checkers::count_legal_moves(b, pg::capture_rule_arg(fcinfo, 1))));
}

// is_legal(checkers_board, checkers_move, rule): false (not an error) when it is not.
PGMATE_FUNCTION(checkers_is_legal) {
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const checkers::Move wanted = pg::checkers_move_arg(fcinfo, 1);
  checkers::MoveList list;
  checkers::legal_moves(b, list, pg::capture_rule_arg(fcinfo, 2));
  for (const checkers::Move& m : list)
    if (pg::same_checkers_move(m, wanted)) return BoolGetDatum(true);
  return BoolGetDatum(false);
}

// ---------------------------------------------------------------- perft

// perft(checkers_board, depth, rule): polls for query cancel and statement_timeout
// between subtrees of at most checkers::kPollDepth plies.
// device: 'cpu' counts in this backend, 'gpu' or 'worker' on pgmate-worker (its CUDA
// kernel, or its CPU threads).
PGMATE_FUNCTION(checkers_perft) {
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const int depth = depth_arg(fcinfo, 1);
  const checkers::CaptureRule rule = pg::capture_rule_arg(fcinfo, 2);
  const std::string device = pg::text_arg(fcinfo, 3);
  if (device == "cpu") return Int64GetDatum(int64(checkers::perft_polling(b, depth, rule, pg::check_for_interrupts)));
  if (device != "gpu" && device != "worker")
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "device must be 'cpu' (this backend), 'gpu' or 'worker' (pgmate-worker), not " +
                           quote_input(device, 40));
  pg::check_worker_perft_depth(depth, true);
  const worker::Device where = device == "gpu" ? worker::Device::kGpu : worker::Device::kAuto;
  return Int64GetDatum(int64(
      pg::with_worker([&](worker::WorkerClient& c) { return c.checkers_perft(b, depth, rule, where); })));
}

// perft_divide(checkers_board, depth, rule) -> SETOF (move, nodes), in notation order.
PGMATE_FUNCTION(checkers_perft_divide) {
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const int depth = depth_arg(fcinfo, 1);
  const checkers::CaptureRule rule = pg::capture_rule_arg(fcinfo, 2);
  std::vector<checkers::Move> moves;
  if (depth > 0) moves = checkers::sorted_legal_moves(b, rule);
  std::vector<std::uint64_t> nodes;
  nodes.reserve(moves.size());
  for (const checkers::Move& m : moves) {
    checkers::Board next = b;
    next.play(m);
    nodes.push_back(checkers::perft_polling(next, depth - 1, rule, pg::check_for_interrupts));
  }
  std::vector<Datum> datums;
  for (const checkers::Move& m : moves) datums.push_back(pg::checkers_move_to_datum(m));
  pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (size_t i = 0; i < moves.size(); ++i) {
      Datum values[2] = {datums[i], Int64GetDatum(int64(nodes[i]))};
      bool nulls[2] = {false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}

// ---------------------------------------------------------------- pictures

PGMATE_FUNCTION(checkers_board_diagram) {
  return pg::text_datum(checkers::board_diagram(pg::checkers_board_arg(fcinfo, 0)));
}

// board_svg(checkers_board, last_move checkers_move DEFAULT NULL): the last move is only
// drawn, not checked against the board.
PGMATE_FUNCTION(checkers_board_svg) {
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  if (PG_ARGISNULL(1)) return pg::text_datum(checkers::board_svg(b, nullptr));
  const checkers::Move last = pg::checkers_move_arg(fcinfo, 1);
  return pg::text_datum(checkers::board_svg(b, &last));
}
