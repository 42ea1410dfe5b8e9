// The `move` type: 16 bits by value, UCI text, board-free (castling and en passant are
// recognised when the move is played on a board), and the helpers that need a board.
#include <cstdint>
#include <span>
#include <string>

#include "chess/fen.h"
#include "chess/notation.h"
#include "datum.h"

using namespace pgmate;

namespace {

// Orders moves by from-square, to-square, promotion piece.
int move_order(chess::Move m) {
  const int promotion = m.kind() == chess::kPromotion ? 1 + (m.promotion() - chess::kKnight) : 0;
  return (m.from() << 10) | (m.to() << 4) | promotion;
}

int compare_moves(FunctionCallInfo fcinfo) {
  const int a = move_order(pg::move_arg(fcinfo, 0)), b = move_order(pg::move_arg(fcinfo, 1));
  return a < b ? -1 : a > b ? 1 : 0;
}

}  // namespace

PGMATE_FUNCTION(move_in) { return pg::move_to_datum(chess::parse_uci_syntax(PG_GETARG_CSTRING(0))); }

PGMATE_FUNCTION(move_out) { return CStringGetDatum(pg::cstring_copy(chess::to_uci(pg::move_arg(fcinfo, 0)))); }

PGMATE_FUNCTION(move_recv) {
  StringInfo buf = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
  if (buf->len - buf->cursor != 2)
    throw pg::SqlError(ERRCODE_INVALID_BINARY_REPRESENTATION,
                       "invalid binary move: expected 2 bytes, got " + std::to_string(buf->len - buf->cursor));
  // The two bytes in network order, read here: their count is checked above, so
  // pq_getmsgint could not fail, and its guard cost a setjmp per move of a binary import.
  const auto* bytes = reinterpret_cast<const unsigned char*>(buf->data + buf->cursor);
  const auto bits = static_cast<std::uint16_t>(bytes[0] << 8 | bytes[1]);
  buf->cursor += 2;
  const chess::Move m(bits);
  // Only from/to/promotion encodings that text input could produce are accepted.
  if (m.from() == m.to() || chess::board_free(m) != m || (m.kind() != chess::kPromotion && (bits >> 14) != 0))
    throw pg::SqlError(ERRCODE_INVALID_BINARY_REPRESENTATION, "invalid binary move: bits 0x" + [&] {
      char hex[8];
      snprintf(hex, sizeof hex, "%04x", bits);
      return std::string(hex);
    }());
  return pg::move_to_datum(m);
}

PGMATE_FUNCTION(move_send) {
  const std::uint16_t bits = pg::move_arg(fcinfo, 0).bits();
  return pgmate::pg::pg_call([&] {
    StringInfoData buf;
    pq_begintypsend(&buf);
    pq_sendint16(&buf, bits);
    return PointerGetDatum(pq_endtypsend(&buf));
  });
}

PGMATE_FUNCTION(move_eq) { return BoolGetDatum(compare_moves(fcinfo) == 0); }
PGMATE_FUNCTION(move_ne) { return BoolGetDatum(compare_moves(fcinfo) != 0); }
PGMATE_FUNCTION(move_lt) { return BoolGetDatum(compare_moves(fcinfo) < 0); }
PGMATE_FUNCTION(move_le) { return BoolGetDatum(compare_moves(fcinfo) <= 0); }
PGMATE_FUNCTION(move_gt) { return BoolGetDatum(compare_moves(fcinfo) > 0); }
PGMATE_FUNCTION(move_ge) { return BoolGetDatum(compare_moves(fcinfo) >= 0); }
PGMATE_FUNCTION(move_cmp) { return Int32GetDatum(compare_moves(fcinfo)); }
PGMATE_FUNCTION(move_hash) {
  return Int32GetDatum(int32(std::uint32_t(move_order(pg::move_arg(fcinfo, 0))) * 2654435761u));
}

PGMATE_FUNCTION(move_from_square) { return pg::text_datum(chess::square_name(pg::move_arg(fcinfo, 0).from())); }
PGMATE_FUNCTION(move_to_square) { return pg::text_datum(chess::square_name(pg::move_arg(fcinfo, 0).to())); }
PGMATE_FUNCTION(move_promotion) {
  const chess::Move m = pg::move_arg(fcinfo, 0);
  if (m.kind() != chess::kPromotion) PG_RETURN_NULL();
  return pg::text_datum(std::string(1, "pnbrqk"[m.promotion()]));
}

// san(board, move): the move must be legal on the board.
PGMATE_FUNCTION(move_san) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  return pg::text_datum(chess::to_san(b, chess::resolve_move(b, pg::move_arg(fcinfo, 1))));
}

// move(board, text): SAN or UCI, validated against the board.
PGMATE_FUNCTION(move_parse) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  return pg::move_to_datum(chess::parse_san(b, pg::text_arg(fcinfo, 1)));
}

// move[] overlap and containment (&&, @>, <@). Moves are stored board-free, so equal moves
// have equal bits: each element is looked up in a small filter built over the other array
// instead of calling move_eq for every pair, as PostgreSQL's anyarray operators do. NULL
// elements match nothing, as there.
namespace {

// Membership in one array's moves: a 1024-bit filter first, the array itself on a hit.
class MoveSet {
 public:
  explicit MoveSet(std::span<const std::uint16_t> moves) : moves_(moves) {
    for (const std::uint16_t m : moves) filter_[slot(m) / 64] |= std::uint64_t{1} << (slot(m) % 64);
  }
  bool contains(std::uint16_t m) const {
    if (!((filter_[slot(m) / 64] >> (slot(m) % 64)) & 1)) return false;
    for (const std::uint16_t x : moves_)
      if (x == m) return true;
    return false;
  }

 private:
  static unsigned slot(std::uint16_t m) { return (std::uint32_t{m} * 2654435761u) >> 22; }
  std::span<const std::uint16_t> moves_;
  std::uint64_t filter_[16] = {};
};

bool overlaps(const pg::MoveValues& a, const pg::MoveValues& b) {
  const bool a_smaller = a.present.size() <= b.present.size();
  const MoveSet set(a_smaller ? a.present : b.present);
  for (const std::uint16_t m : a_smaller ? b.present : a.present)
    if (set.contains(m)) return true;
  return false;
}

// Every element of `part` (none NULL) is in `whole`.
bool contains(const pg::MoveValues& whole, const pg::MoveValues& part) {
  if (part.first_null >= 0) return false;
  const MoveSet set(whole.present);
  for (const std::uint16_t m : part.present)
    if (!set.contains(m)) return false;
  return true;
}

}  // namespace

PGMATE_FUNCTION(move_array_overlap) { return BoolGetDatum(overlaps(pg::move_values_arg(fcinfo, 0), pg::move_values_arg(fcinfo, 1))); }
PGMATE_FUNCTION(move_array_contains) { return BoolGetDatum(contains(pg::move_values_arg(fcinfo, 0), pg::move_values_arg(fcinfo, 1))); }
PGMATE_FUNCTION(move_array_contained) { return BoolGetDatum(contains(pg::move_values_arg(fcinfo, 1), pg::move_values_arg(fcinfo, 0))); }
