// The `board` type: I/O (FEN text, validated 32-byte binary), comparison, keys and the
// questions one asks of a position.
#include <cstring>
#include <string>

#include "chess/fen.h"
#include "chess/game.h"
#include "chess/notation.h"
#include "datum.h"

using namespace pgmate;
using pgmate::pg::pg_call;

namespace {

int compare_boards(FunctionCallInfo fcinfo) {
  return std::memcmp(DatumGetPointer(PG_GETARG_DATUM(0)), DatumGetPointer(PG_GETARG_DATUM(1)), pg::kBoardSize);
}

}  // namespace

PGMATE_FUNCTION(board_in) {
  const char* text = PG_GETARG_CSTRING(0);
  return pg::board_to_datum(chess::parse_fen(text));
}

PGMATE_FUNCTION(board_out) {
  return CStringGetDatum(pg::cstring_copy(chess::to_fen(pg::board_arg(fcinfo, 0))));
}

// Binary input is checked as strictly as text: a crafted value gives an error, never a
// corrupt board.
PGMATE_FUNCTION(board_recv) {
  StringInfo buf = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
  if (buf->len - buf->cursor != pg::kBoardSize)
    throw pg::SqlError(ERRCODE_INVALID_BINARY_REPRESENTATION,
                       "invalid packed board: expected " + std::to_string(pg::kBoardSize) + " bytes, got " +
                           std::to_string(buf->len - buf->cursor));
  chess::PackedBoard packed;
  std::memcpy(packed.data(), buf->data + buf->cursor, pg::kBoardSize);
  buf->cursor += pg::kBoardSize;
  chess::Board board;
  try {
    board = chess::unpack(packed);
  } catch (const chess::ParseError& e) {
    throw pg::SqlError(ERRCODE_INVALID_BINARY_REPRESENTATION, e.what());
  }
  if (chess::pack(board) != packed)
    throw pg::SqlError(ERRCODE_INVALID_BINARY_REPRESENTATION, "invalid packed board: not in canonical form");
  return pg::board_to_datum(board);
}

PGMATE_FUNCTION(board_send) {
  const void* data = DatumGetPointer(PG_GETARG_DATUM(0));
  return pg_call([&] {
    StringInfoData buf;
    pq_begintypsend(&buf);
    pq_sendbytes(&buf, static_cast<const char*>(data), pg::kBoardSize);
    return PointerGetDatum(pq_endtypsend(&buf));
  });
}

PGMATE_FUNCTION(board_eq) { return BoolGetDatum(compare_boards(fcinfo) == 0); }
PGMATE_FUNCTION(board_ne) { return BoolGetDatum(compare_boards(fcinfo) != 0); }
PGMATE_FUNCTION(board_lt) { return BoolGetDatum(compare_boards(fcinfo) < 0); }
PGMATE_FUNCTION(board_le) { return BoolGetDatum(compare_boards(fcinfo) <= 0); }
PGMATE_FUNCTION(board_gt) { return BoolGetDatum(compare_boards(fcinfo) > 0); }
PGMATE_FUNCTION(board_ge) { return BoolGetDatum(compare_boards(fcinfo) >= 0); }
PGMATE_FUNCTION(board_cmp) {
  const int c = compare_boards(fcinfo);
  return Int32GetDatum(c < 0 ? -1 : c > 0 ? 1 : 0);
}
PGMATE_FUNCTION(board_hash) {
  const void* data = DatumGetPointer(PG_GETARG_DATUM(0));
  return pg_call([&] { return hash_any(static_cast<const unsigned char*>(data), pg::kBoardSize); });
}

// The Polyglot key (clocks ignored), as a signed bigint with the same 64 bits.
PGMATE_FUNCTION(board_key) { return Int64GetDatum(static_cast<int64>(pg::board_arg(fcinfo, 0).key)); }

PGMATE_FUNCTION(board_side_to_move) {
  return pg::text_datum(pg::board_arg(fcinfo, 0).side == chess::kWhite ? "white" : "black");
}

PGMATE_FUNCTION(board_in_check) { return BoolGetDatum(pg::board_arg(fcinfo, 0).in_check()); }

PGMATE_FUNCTION(board_status) {
  return pg::text_datum(chess::status_name(chess::board_status(pg::board_arg(fcinfo, 0))));
}

PGMATE_FUNCTION(board_piece_at) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  const chess::Piece p = b.piece_on(pg::square_arg(fcinfo, 1));
  if (p == chess::kNoPiece) PG_RETURN_NULL();
  return pg::text_datum(pg::piece_text(p));
}

// An illegal move (or one past move 65535) is 22023, text that is not a move 22P02.
PGMATE_FUNCTION(board_play) {
  chess::Board b = pg::board_arg(fcinfo, 0);
  chess::play_checked(b, chess::resolve_move(b, pg::move_arg(fcinfo, 1)));
  return pg::board_to_datum(b);
}

// play(board, text): SAN or UCI. Also what a bare literal resolves to, play('startpos', 'e4').
PGMATE_FUNCTION(board_play_text) {
  chess::Board b = pg::board_arg(fcinfo, 0);
  chess::play_checked(b, chess::parse_san(b, pg::text_arg(fcinfo, 1)));
  return pg::board_to_datum(b);
}

PGMATE_FUNCTION(board_play_moves) {
  chess::Board b = pg::board_arg(fcinfo, 0);
  const std::vector<Datum> moves = pg::array_elements(fcinfo, 1, "moves");
  for (size_t i = 0; i < moves.size(); ++i) {
    const chess::Move m = pg::move_from_datum(moves[i]);
    try {
      chess::play_checked(b, chess::resolve_move(b, m));
    } catch (const chess::IllegalMove& e) {
      throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "move " + std::to_string(i + 1) + " of " +
                                                              std::to_string(moves.size()) + ": " + e.what());
    }
  }
  return pg::board_to_datum(b);
}

// pieces(board) -> SETOF (square text, piece text), a1 first.
PGMATE_FUNCTION(board_pieces) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (chess::Square s = 0; s < 64; ++s) {
      const chess::Piece p = b.piece_on(s);
      if (p == chess::kNoPiece) continue;
      const char name[3] = {char('a' + chess::file_of(s)), char('1' + chess::rank_of(s)), 0};
      const char letter[2] = {chess::piece_char(p), 0};
      Datum values[2] = {CStringGetTextDatum(name), CStringGetTextDatum(letter)};
      bool nulls[2] = {false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}
