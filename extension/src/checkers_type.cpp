// The checkers types: `checkers_board` (PDN FEN text, validated 13-byte binary) and
// `checkers_move` (numeric notation, board-free), their comparison and hashing, and the
// conversions of checkers_datum.h.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "checkers/notation.h"
#include "checkers_datum.h"
#include "common/text.h"

using namespace pgmate;
using pgmate::pg::pg_call;

namespace pgmate::pg {

namespace {

struct BoardBytes {
  std::uint32_t white, black, kings;
  std::uint8_t side;
  std::uint8_t zero[3];
};
static_assert(sizeof(BoardBytes) == kCheckersBoardSize);
static_assert(sizeof(checkers::Move) == kCheckersMoveSize);

std::string quoted(std::string_view s) { return quote_input(s, 80); }

}  // namespace

checkers::Board checkers_board_from_datum(Datum d) {
  BoardBytes bytes;
  std::memcpy(&bytes, DatumGetPointer(d), sizeof bytes);
  checkers::Board b;
  b.white = bytes.white;
  b.black = bytes.black;
  b.kings = bytes.kings;
  b.side = bytes.side ? checkers::kWhite : checkers::kBlack;
  return b;
}

Datum checkers_board_to_datum(const checkers::Board& b) {
  BoardBytes bytes{};
  bytes.white = b.white;
  bytes.black = b.black;
  bytes.kings = b.kings;
  bytes.side = b.side == checkers::kWhite ? 1 : 0;
  void* out = pg_call([] { return palloc(kCheckersBoardSize); });
  std::memcpy(out, &bytes, sizeof bytes);
  return PointerGetDatum(out);
}

checkers::Move checkers_board_free(const checkers::Move& m) {
  checkers::Move c{};
  c.captured = m.captured;
  c.from = m.from;
  c.to = m.to;
  c.captures = m.captures;
  for (int i = 0; i + 1 < m.captures && i < checkers::kMaxCaptures - 1; ++i) c.path[i] = m.path[i];
  return c;
}

bool same_checkers_move(const checkers::Move& a, const checkers::Move& b) {
  const checkers::Move x = checkers_board_free(a), y = checkers_board_free(b);
  return std::memcmp(&x, &y, sizeof x) == 0;
}

checkers::Move checkers_move_from_datum(Datum d) {
  checkers::Move m;
  std::memcpy(&m, DatumGetPointer(d), sizeof m);
  return m;
}

Datum checkers_move_to_datum(const checkers::Move& m) {
  const checkers::Move c = checkers_board_free(m);
  void* out = pg_call([] { return palloc(kCheckersMoveSize); });
  std::memcpy(out, &c, sizeof c);
  return PointerGetDatum(out);
}

checkers::CaptureRule capture_rule_arg(FunctionCallInfo fcinfo, int n) {
  const std::string rule = text_arg(fcinfo, n);
  if (rule == "any") return checkers::CaptureRule::kAny;
  if (rule == "longest") return checkers::CaptureRule::kLongest;
  throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                 "rule must be 'any' (any capture sequence) or 'longest' (only those taking the most pieces), not " +
                     quoted(rule));
}

}  // namespace pgmate::pg

namespace {

// Binary form of checkers_board: White's, Black's and the kings' squares as 32-bit masks
// in network byte order, bit n-1 for PDN square n (independent of the internal indexing),
// then the side to move (0 Black, 1 White): 13 bytes.
constexpr int kBoardWireSize = 13;

checkers::Mask to_pdn_bits(checkers::Mask m) {
  checkers::Mask out = 0;
  for (int n = 1; n <= 32; ++n)
    if (m & checkers::bit(checkers::kPdnToSquare[n])) out |= checkers::Mask(1) << (n - 1);
  return out;
}

checkers::Mask from_pdn_bits(checkers::Mask m) {
  checkers::Mask out = 0;
  for (int n = 1; n <= 32; ++n)
    if (m & (checkers::Mask(1) << (n - 1))) out |= checkers::bit(checkers::kPdnToSquare[n]);
  return out;
}

std::uint32_t read_u32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return std::uint32_t(u[0]) << 24 | std::uint32_t(u[1]) << 16 | std::uint32_t(u[2]) << 8 | std::uint32_t(u[3]);
}

[[noreturn]] void bad_binary(const std::string& why) {
  throw pg::SqlError(ERRCODE_INVALID_BINARY_REPRESENTATION, why);
}

int compare_checkers_boards(FunctionCallInfo fcinfo) {
  return std::memcmp(DatumGetPointer(PG_GETARG_DATUM(0)), DatumGetPointer(PG_GETARG_DATUM(1)),
                     pg::kCheckersBoardSize);
}

// Moves are ordered as notation sorts them: by start square, then landing squares, all
// as PDN numbers (the order of legal_moves and perft_divide).
int compare_checkers_moves(FunctionCallInfo fcinfo) {
  const checkers::Move a = pg::checkers_move_arg(fcinfo, 0), b = pg::checkers_move_arg(fcinfo, 1);
  auto key = [](const checkers::Move& m, int i) {
    // i = 0: start; then the landing squares (for a simple move, its end)
    if (i == 0) return int(checkers::kSquareToPdn[m.from & 31]);
    if (!m.is_capture()) return int(checkers::kSquareToPdn[m.to & 31]);
    return int(checkers::kSquareToPdn[m.landing(i - 1) & 31]);
  };
  const int la = 1 + (a.is_capture() ? a.captures : 1), lb = 1 + (b.is_capture() ? b.captures : 1);
  for (int i = 0; i < la && i < lb; ++i) {
    const int x = key(a, i), y = key(b, i);
    if (x != y) return x < y ? -1 : 1;
  }
  if (la != lb) return la < lb ? -1 : 1;
  if (a.captures != b.captures) return a.captures < b.captures ? -1 : 1;
  return 0;
}

}  // namespace

// ---------------------------------------------------------------- checkers_board

PGMATE_FUNCTION(checkers_board_in) {
  return pg::checkers_board_to_datum(checkers::parse_fen(PG_GETARG_CSTRING(0)));
}

PGMATE_FUNCTION(checkers_board_out) {
  return CStringGetDatum(pg::cstring_copy(checkers::to_fen(pg::checkers_board_arg(fcinfo, 0))));
}

PGMATE_FUNCTION(checkers_board_recv) {
  StringInfo buf = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
  const int length = buf->len - buf->cursor;
  if (length != kBoardWireSize)
    bad_binary("invalid binary checkers board: expected " + std::to_string(kBoardWireSize) + " bytes, got " +
               std::to_string(length));
  const char* p = buf->data + buf->cursor;
  const std::uint8_t side = static_cast<std::uint8_t>(p[12]);
  if (side > 1)
    bad_binary("invalid binary checkers board: side to move byte is " + std::to_string(side) +
               "; expected 0 (Black) or 1 (White)");
  checkers::Board b;
  b.white = from_pdn_bits(read_u32(p));
  b.black = from_pdn_bits(read_u32(p + 4));
  b.kings = from_pdn_bits(read_u32(p + 8));
  b.side = side ? checkers::kWhite : checkers::kBlack;
  buf->cursor += kBoardWireSize;
  try {
    checkers::validate_position(b, "binary checkers board");
  } catch (const checkers::ParseError& e) {
    bad_binary(e.what());
  }
  return pg::checkers_board_to_datum(b);
}

PGMATE_FUNCTION(checkers_board_send) {
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const std::uint32_t white = to_pdn_bits(b.white), black = to_pdn_bits(b.black), kings = to_pdn_bits(b.kings);
  const int side = b.side == checkers::kWhite ? 1 : 0;
  return pg_call([&] {
    StringInfoData buf;
    pq_begintypsend(&buf);
    pq_sendint32(&buf, white);
    pq_sendint32(&buf, black);
    pq_sendint32(&buf, kings);
    pq_sendbyte(&buf, side);
    return PointerGetDatum(pq_endtypsend(&buf));
  });
}

PGMATE_FUNCTION(checkers_board_eq) { return BoolGetDatum(compare_checkers_boards(fcinfo) == 0); }
PGMATE_FUNCTION(checkers_board_ne) { return BoolGetDatum(compare_checkers_boards(fcinfo) != 0); }
PGMATE_FUNCTION(checkers_board_lt) { return BoolGetDatum(compare_checkers_boards(fcinfo) < 0); }
PGMATE_FUNCTION(checkers_board_le) { return BoolGetDatum(compare_checkers_boards(fcinfo) <= 0); }
PGMATE_FUNCTION(checkers_board_gt) { return BoolGetDatum(compare_checkers_boards(fcinfo) > 0); }
PGMATE_FUNCTION(checkers_board_ge) { return BoolGetDatum(compare_checkers_boards(fcinfo) >= 0); }
PGMATE_FUNCTION(checkers_board_cmp) {
  const int c = compare_checkers_boards(fcinfo);
  return Int32GetDatum(c < 0 ? -1 : c > 0 ? 1 : 0);
}
PGMATE_FUNCTION(checkers_board_hash) {
  const void* data = DatumGetPointer(PG_GETARG_DATUM(0));
  return pg_call([&] { return hash_any(static_cast<const unsigned char*>(data), pg::kCheckersBoardSize); });
}

// ---------------------------------------------------------------- checkers_move

// Text: 11-15, 15x24, 15x24x31 (every landing square; the start and end alone do not name
// a multiple jump without a board: move(checkers_board, text) and play(checkers_board,
// text) accept that shorthand).
PGMATE_FUNCTION(checkers_move_in) {
  const char* text = PG_GETARG_CSTRING(0);
  return pg::checkers_move_to_datum(
      checkers::move_from_squares(checkers::lex_move(text), "checkers move " + pg::quoted(text)));
}

PGMATE_FUNCTION(checkers_move_out) {
  return CStringGetDatum(pg::cstring_copy(checkers::to_text(pg::checkers_move_arg(fcinfo, 0))));
}

// Binary: the number of jumps (0 for a simple move), the start square, then the end
// square of a simple move or every landing square of a jump; squares as PDN numbers, one
// byte each (3 to 11 bytes). Checked like text input.
PGMATE_FUNCTION(checkers_move_recv) {
  StringInfo buf = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
  const int length = buf->len - buf->cursor;
  const auto* p = reinterpret_cast<const unsigned char*>(buf->data + buf->cursor);
  if (length < 1) bad_binary("invalid binary checkers move: empty");
  const int jumps = p[0];
  if (jumps > checkers::kMaxCaptures)
    bad_binary("invalid binary checkers move: " + std::to_string(jumps) + " jumps (at most " +
               std::to_string(checkers::kMaxCaptures) + ")");
  const int expected = 2 + (jumps == 0 ? 1 : jumps);
  if (length != expected)
    bad_binary("invalid binary checkers move: expected " + std::to_string(expected) + " bytes for " +
               (jumps == 0 ? std::string("a simple move")
                           : std::to_string(jumps) + (jumps == 1 ? " jump" : " jumps")) +
               ", got " + std::to_string(length));
  checkers::MoveText t;
  t.separator = jumps == 0 ? '-' : 'x';
  std::string text;
  for (int i = 1; i < expected; ++i) {
    t.squares.push_back(p[i]);
    if (i > 1) text += t.separator;
    text += std::to_string(p[i]);
  }
  buf->cursor += expected;
  checkers::Move m;
  try {
    m = checkers::move_from_squares(t, "binary checkers move (" + text + ")");
  } catch (const checkers::ParseError& e) {
    bad_binary(e.what());
  }
  return pg::checkers_move_to_datum(m);
}

PGMATE_FUNCTION(checkers_move_send) {
  const checkers::Move m = pg::checkers_move_arg(fcinfo, 0);
  return pg_call([&] {
    StringInfoData buf;
    pq_begintypsend(&buf);
    pq_sendbyte(&buf, m.captures);
    pq_sendbyte(&buf, checkers::kSquareToPdn[m.from & 31]);
    if (!m.is_capture()) {
      pq_sendbyte(&buf, checkers::kSquareToPdn[m.to & 31]);
    } else {
      for (int i = 0; i < m.captures; ++i) pq_sendbyte(&buf, checkers::kSquareToPdn[m.landing(i) & 31]);
    }
    return PointerGetDatum(pq_endtypsend(&buf));
  });
}

PGMATE_FUNCTION(checkers_move_eq) { return BoolGetDatum(compare_checkers_moves(fcinfo) == 0); }
PGMATE_FUNCTION(checkers_move_ne) { return BoolGetDatum(compare_checkers_moves(fcinfo) != 0); }
PGMATE_FUNCTION(checkers_move_lt) { return BoolGetDatum(compare_checkers_moves(fcinfo) < 0); }
PGMATE_FUNCTION(checkers_move_le) { return BoolGetDatum(compare_checkers_moves(fcinfo) <= 0); }
PGMATE_FUNCTION(checkers_move_gt) { return BoolGetDatum(compare_checkers_moves(fcinfo) > 0); }
PGMATE_FUNCTION(checkers_move_ge) { return BoolGetDatum(compare_checkers_moves(fcinfo) >= 0); }
PGMATE_FUNCTION(checkers_move_cmp) { return Int32GetDatum(compare_checkers_moves(fcinfo)); }
// Hashes the canonical bytes: moves compare equal exactly when those are equal.
PGMATE_FUNCTION(checkers_move_hash) {
  const checkers::Move m = pg::checkers_board_free(pg::checkers_move_arg(fcinfo, 0));
  return pg_call([&] { return hash_any(reinterpret_cast<const unsigned char*>(&m), pg::kCheckersMoveSize); });
}
