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
#include "checkers_datum.h"
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

// Move text against a board: malformed text is 22P02, a move not legal here 22023.
checkers::Move parse_on_board(const checkers::Board& b, const std::string& text, checkers::CaptureRule rule) {
  pg::lex_checkers_move(text);  // throws ParseError (22P02) for text that is not a move
  try {
    return checkers::parse_move(b, text, rule);
  } catch (const checkers::ParseError& e) {
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, e.what());
  }
}

// ---- board_svg for checkers --------------------------------------------------------
// A pure function (no PostgreSQL): it belongs in core/checkers (svg.h/svg.cpp, beside
// render.h) and lives here only until core takes it. The same geometry and colours as
// chess::board_svg: 45-pixel squares, a 20-pixel margin with the coordinates, a1 dark.
// Dark squares carry their PDN number; men are discs, kings discs with a crown. The last
// move, when given, highlights its start and landing squares, and the squares it jumped.
namespace svg {

constexpr int kSquare = 45;
constexpr int kMargin = 20;
constexpr int kSize = 8 * kSquare + 2 * kMargin;
constexpr const char* kLight = "#f0d9b5";
constexpr const char* kDark = "#b58863";
constexpr const char* kFonts = "'DejaVu Sans', Verdana, Arial, sans-serif";

// (file, rank) of an internal square, from its PDN number.
int file_of(checkers::Square s) { return checkers::pdn_file(checkers::kSquareToPdn[s & 31]); }
int rank_of(checkers::Square s) { return checkers::pdn_rank(checkers::kSquareToPdn[s & 31]); }
int x_of(int file) { return kMargin + file * kSquare; }
int y_of(int rank) { return kMargin + (7 - rank) * kSquare; }

void rect(std::string& out, int file, int rank, const std::string& attrs) {
  out += "<rect x=\"" + std::to_string(x_of(file)) + "\" y=\"" + std::to_string(y_of(rank)) + "\" width=\"" +
         std::to_string(kSquare) + "\" height=\"" + std::to_string(kSquare) + "\" " + attrs + "/>\n";
}

void highlight(std::string& out, checkers::Square s, const char* attrs) { rect(out, file_of(s), rank_of(s), attrs); }

std::string board_svg(const checkers::Board& b, const checkers::Move* last) {
  using namespace checkers;
  const std::string size = std::to_string(kSize);
  std::string out;
  out.reserve(16384);
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + size + "\" height=\"" + size + "\" viewBox=\"0 0 " +
         size + " " + size + "\" role=\"img\">\n";
  out += "<title>" + to_fen(b) + "</title>\n";

  // Squares: a1 is dark; only dark squares are played on.
  for (int rank = 0; rank < 8; ++rank)
    for (int file = 0; file < 8; ++file) {
      const bool dark = (file + rank) % 2 == 0;
      rect(out, file, rank,
           std::string("class=\"square ") + (dark ? "dark" : "light") + "\" fill=\"" + (dark ? kDark : kLight) + "\"");
    }

  // The last move: start and landing squares, and the squares it jumped.
  if (last) {
    Mask marked = bit(last->from);
    highlight(out, last->from, "class=\"last-move\" fill=\"#ffeb3b\" fill-opacity=\"0.45\"");
    const int landings = last->is_capture() ? last->captures : 1;
    for (int i = 0; i < landings; ++i) {
      const Square s = last->is_capture() ? last->landing(i) : last->to;
      if (marked & bit(s)) continue;
      marked |= bit(s);
      highlight(out, s, "class=\"last-move\" fill=\"#ffeb3b\" fill-opacity=\"0.45\"");
    }
    for (Mask m = last->captured; m;) highlight(out, pop_lsb(m), "class=\"last-capture\" fill=\"#e53935\" fill-opacity=\"0.35\"");
  }

  // Coordinates: files below the board, ranks on its left.
  const std::string coord_style =
      "font-family=\"" + std::string(kFonts) + "\" font-size=\"13\" fill=\"#555\" text-anchor=\"middle\"";
  for (int i = 0; i < 8; ++i) {
    out += "<text class=\"coord\" x=\"" + std::to_string(kMargin + i * kSquare + kSquare / 2) + "\" y=\"" +
           std::to_string(kMargin + 8 * kSquare + 14) + "\" " + coord_style + ">" + char('a' + i) + "</text>\n";
    out += "<text class=\"coord\" x=\"" + std::to_string(kMargin / 2) + "\" y=\"" +
           std::to_string(kMargin + (7 - i) * kSquare + kSquare / 2 + 5) + "\" " + coord_style + ">" + char('1' + i) +
           "</text>\n";
  }

  // Pieces: a disc with an inner ring; a king also wears a crown.
  for (int n = 1; n <= 32; ++n) {
    const Square s = kPdnToSquare[n];
    const Mask m = bit(s);
    if (!(b.occupied() & m)) continue;
    const bool white = (b.white & m) != 0, king = (b.kings & m) != 0;
    const int cx = x_of(pdn_file(n)) + kSquare / 2, cy = y_of(pdn_rank(n)) + kSquare / 2;
    const std::string x = std::to_string(cx), y = std::to_string(cy);
    out += std::string("<g class=\"piece ") + (white ? "white " : "black ") + (king ? "king" : "man") + "\">";
    out += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"16\" fill=\"" + (white ? "#f5f5f0" : "#222222") +
           "\" stroke=\"" + (white ? "#333333" : "#000000") + "\" stroke-width=\"1.5\"/>";
    out += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"11\" fill=\"none\" stroke=\"" +
           (white ? "#b0b0a8" : "#555555") + "\" stroke-width=\"1.5\"/>";
    if (king) {
      auto pt = [&](int dx, int dy) { return std::to_string(cx + dx) + "," + std::to_string(cy + dy); };
      out += "<polygon class=\"crown\" points=\"" + pt(-8, 5) + " " + pt(-8, -5) + " " + pt(-4, 0) + " " + pt(0, -7) +
             " " + pt(4, 0) + " " + pt(8, -5) + " " + pt(8, 5) +
             "\" fill=\"#d4af37\" stroke=\"#7a5c00\" stroke-width=\"0.8\"/>";
    }
    out += "</g>\n";
  }

  // PDN numbers in the corner of the dark squares, above the pieces.
  for (int n = 1; n <= 32; ++n)
    out += "<text class=\"number\" x=\"" + std::to_string(x_of(pdn_file(n)) + 2) + "\" y=\"" +
           std::to_string(y_of(pdn_rank(n)) + 9) + "\" font-family=\"" + kFonts +
           "\" font-size=\"8\" fill=\"#f0d9b5\">" + std::to_string(n) + "</text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace svg

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
  b.play(parse_on_board(b, text, rule));
  return pg::checkers_board_to_datum(b);
}

// ---------------------------------------------------------------- moves

// move(checkers_board, text): the legal move the text names, in board-free form.
PGMATE_FUNCTION(checkers_move_parse) {
  const checkers::Board b = pg::checkers_board_arg(fcinfo, 0);
  const std::string text = pg::text_arg(fcinfo, 1);
  const checkers::CaptureRule rule = pg::capture_rule_arg(fcinfo, 2);
  return pg::checkers_move_to_datum(parse_on_board(b, text, rule));
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
                       "device must be 'cpu' (this backend), 'gpu' or 'worker' (pgmate-worker), not \"" +
                           device.substr(0, 40) + "\"");
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
  if (PG_ARGISNULL(1)) return pg::text_datum(svg::board_svg(b, nullptr));
  const checkers::Move last = pg::checkers_move_arg(fcinfo, 1);
  return pg::text_datum(svg::board_svg(b, &last));
}
