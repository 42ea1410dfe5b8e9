// legal_moves(board) and the batch helpers legal_move_count(board), is_legal(board, move).
#include <string>
#include <vector>

#include "chess/fen.h"
#include "chess/notation.h"
#include "datum.h"

using namespace pgmate;

namespace {

struct MoveRow {
  chess::Move move;
  std::string uci, san, from, to;
  char piece, captured, promotion;  // 0 = NULL
  bool is_check, is_mate;
};

std::vector<MoveRow> describe_moves(const chess::Board& b) {
  chess::MoveList list;
  chess::legal_moves(b, list);
  std::vector<MoveRow> rows;
  rows.reserve(list.size);
  for (chess::Move m : list) {
    MoveRow r;
    r.move = m;
    r.uci = chess::to_uci(m);
    r.san = chess::to_san(b, m);
    r.from = chess::square_name(m.from());
    r.to = chess::square_name(m.to());
    r.piece = chess::piece_char(b.piece_on(m.from()));
    const chess::Square captured_on =
        m.kind() == chess::kEnPassant ? (b.side == chess::kWhite ? m.to() - 8 : m.to() + 8) : m.to();
    const chess::Piece captured = m.kind() == chess::kCastling ? chess::kNoPiece : b.piece_on(captured_on);
    r.captured = captured == chess::kNoPiece ? 0 : chess::piece_char(captured);
    r.promotion = m.kind() == chess::kPromotion ? "pnbrqk"[m.promotion()] : 0;
    r.is_check = !r.san.empty() && (r.san.back() == '+' || r.san.back() == '#');
    r.is_mate = !r.san.empty() && r.san.back() == '#';
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

// legal_moves(board) -> SETOF (move, uci, san, piece, from_square, to_square, captured,
// promotion, is_check, is_mate)
PGMATE_FUNCTION(board_legal_moves) {
  const std::vector<MoveRow> rows = describe_moves(pg::board_arg(fcinfo, 0));
  pg::pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (const MoveRow& r : rows) {
      const char piece[2] = {r.piece, 0}, captured[2] = {r.captured, 0}, promotion[2] = {r.promotion, 0};
      Datum values[10] = {
          pg::move_to_datum(r.move),       CStringGetTextDatum(r.uci.c_str()), CStringGetTextDatum(r.san.c_str()),
          CStringGetTextDatum(piece),      CStringGetTextDatum(r.from.c_str()), CStringGetTextDatum(r.to.c_str()),
          CStringGetTextDatum(captured),   CStringGetTextDatum(promotion),     BoolGetDatum(r.is_check),
          BoolGetDatum(r.is_mate)};
      bool nulls[10] = {false, false, false, false, false, false, r.captured == 0, r.promotion == 0, false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}

PGMATE_FUNCTION(board_legal_move_count) { return Int32GetDatum(chess::count_legal_moves(pg::board_arg(fcinfo, 0))); }

// is_legal(board, move): false (not an error) for a move that is not legal here.
PGMATE_FUNCTION(board_is_legal) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  const chess::Move wanted = pg::move_arg(fcinfo, 1);
  chess::MoveList list;
  chess::legal_moves(b, list);
  for (chess::Move m : list)
    if (chess::board_free(m) == wanted) return BoolGetDatum(true);
  return BoolGetDatum(false);
}
