// Games as rows: the positions and keys along a game (position search uses the keys
// with a GIN index), and PGN in and out.
#include <string>
#include <vector>

#include "analysis/evaluation.h"
#include "chess/fen.h"
#include "chess/notation.h"
#include "chess/pgn.h"
#include "common/text.h"
#include "datum.h"
#include "game_search.h"
#include "gamedb/game_hash.h"
#include "gamedb/time_control.h"

using namespace pgmate;

namespace {

// Plays `moves` from `start`, calling visit(ply, board_before, move) for each move and
// visit(n, final_board, null move) at the end. An illegal move is an error naming it.
template <class Visit>
void walk_game(const chess::Board& start, const std::vector<Datum>& moves, Visit&& visit) {
  chess::Board b = start;
  for (size_t i = 0; i < moves.size(); ++i) {
    chess::Move m;
    chess::Board next = b;
    try {
      m = chess::resolve_move(b, pg::move_from_datum(moves[i]));
      chess::play_checked(next, m);
    } catch (const chess::IllegalMove& e) {
      throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                         "move " + std::to_string(i + 1) + " of " + std::to_string(moves.size()) + ": " + e.what());
    }
    visit(int(i), b, m);
    b = next;
  }
  visit(int(moves.size()), b, chess::Move());
}

std::vector<std::string> text_array(FunctionCallInfo fcinfo, int n, const char* what) {
  std::vector<std::string> out;
  for (Datum d : pg::array_elements(fcinfo, n, what)) {
    text* t = pg::pg_call([&] { return DatumGetTextPP(d); });
    out.emplace_back(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
  }
  return out;
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

// game_hash(start, moves) -> bigint: the game's identity for finding copies of it
// (pgmate.games.game_hash; pgmate import --duplicates skip).
PGMATE_FUNCTION(game_hash) {
  const chess::Board start = pg::board_arg(fcinfo, 0);
  return Int64GetDatum(static_cast<std::int64_t>(gamedb::game_hash(start.key, pg::move_bits_arg(fcinfo, 1, "moves"))));
}

// is_valid_game(start, moves): every move legal in turn (the games table's CHECK).
// pgmate.game_speed(time_control text) -> text: lichess's speed of a PGN TimeControl, NULL
// for none (core/gamedb/time_control.h).
PGMATE_FUNCTION(game_speed) {
  const std::string_view speed = gamedb::game_speed(pg::text_arg(fcinfo, 0));
  if (speed.empty()) PG_RETURN_NULL();
  return pg::text_datum(speed);
}

PGMATE_FUNCTION(game_is_valid) { return BoolGetDatum(pg::game_summary_arg(fcinfo).legal); }

// pgn_games(pgn text, on_error text DEFAULT 'fail')
//   -> SETOF (tags jsonb, start board, moves move[], result text, movetext_result text,
//             clocks interval[], evals jsonb)
// Reads a whole PGN text. A bad game is an error naming the game and the move, or with
// on_error => 'skip' is left out and counted in a NOTICE. A Result tag that contradicts the
// movetext's result, and an ambiguous move read by the rest of the game, are NOTICEs.
PGMATE_FUNCTION(pgn_games) {
  const std::string pgn = pg::text_arg(fcinfo, 0);
  const std::string on_error = pg::text_arg(fcinfo, 1);
  if (on_error != "fail" && on_error != "skip")
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "on_error must be 'fail' or 'skip', not " + quote_input(on_error, 40));
  // Cancel is checked every few thousand tokens, and before each game is stored: a slice of
  // hostile text (one game of many tags, say) is never read uncancellably.
  chess::PgnReader reader(on_error == "skip" ? chess::PgnErrorMode::kSkip : chess::PgnErrorMode::kFail,
                          pg::check_for_interrupts);
  pg::pg_call([&] { InitMaterializedSRF(fcinfo, 0); });
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const Oid move_type = pg::column_element_type(rsinfo->setDesc, 2);
  int notices = 0;
  constexpr int kMaxNotices = 10;
  const auto notice = [&](const std::string& what) {
    if (++notices > kMaxNotices) return;
    const std::string text = what + (notices == kMaxNotices ? " (no more such notices)" : "");
    pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", text.c_str()))); });
  };

  constexpr size_t kSlice = 1 << 20;
  chess::PgnGame game;
  // Each game's datums live in a context of their own, emptied once the row is stored (the
  // tuplestore keeps a copy): memory stays flat however many games the text holds.
  MemoryContext game_memory = pg::pg_call(
      [] { return AllocSetContextCreate(CurrentMemoryContext, "pgmate pgn_games game", ALLOCSET_DEFAULT_SIZES); });
  auto emit_ready_games = [&] {
    while (reader.next(game)) {
      pg::check_for_interrupts();
      const MemoryContext call_memory = MemoryContextSwitchTo(game_memory);
      const std::string json = chess::tags_json(game.tags);
      std::vector<Datum> moves;
      moves.reserve(game.moves.size());
      for (chess::Move m : game.moves) moves.push_back(pg::move_to_datum(m));
      const Datum start = pg::board_to_datum(game.start);
      const Datum move_array = pg::make_array(moves, move_type);
      if (!game.movetext_result.empty())
        notice("PGN game " + std::to_string(game.number) + ": the Result tag's " + game.result +
               " is kept; the movetext ends with " + game.movetext_result);
      for (const std::string& r : game.resolved) notice("PGN game " + std::to_string(game.number) + ": " + r);
      const Datum clocks = game.clocks.empty() ? Datum(0) : pg::clocks_to_datum(game.clocks);
      // The [%eval] comments as pgmate.save_position_evals takes them.
      int eval_count = 0;
      const std::string evals = "[" + analysis::pgn_evals_json(game.start, game.moves, game.evals, eval_count) + "]";
      pg::pg_call([&] {
        Datum values[7] = {DirectFunctionCall1(jsonb_in, CStringGetDatum(json.c_str())), start, move_array,
                           CStringGetTextDatum(game.result.c_str()),
                           game.movetext_result.empty() ? Datum(0) : CStringGetTextDatum(game.movetext_result.c_str()),
                           clocks, eval_count ? DirectFunctionCall1(jsonb_in, CStringGetDatum(evals.c_str())) : Datum(0)};
        bool nulls[7] = {false, false, false, false, game.movetext_result.empty(), game.clocks.empty(), eval_count == 0};
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
      });
      MemoryContextSwitchTo(call_memory);
      MemoryContextReset(game_memory);
    }
  };
  for (size_t offset = 0; offset < pgn.size(); offset += kSlice) {
    pg::check_for_interrupts();
    reader.feed(std::string_view(pgn).substr(offset, kSlice));
    emit_ready_games();
  }
  reader.finish();
  emit_ready_games();
  if (reader.skipped() > 0) {
    const std::string note = "pgn_games: skipped " + std::to_string(reader.skipped()) + " bad game" +
                             (reader.skipped() == 1 ? "" : "s") + "; last: " + reader.last_error();
    pg::pg_call([&] { ereport(NOTICE, (errmsg("%s", note.c_str()))); });
  }
  return Datum(0);
}

// pgn_text(tag_names text[], tag_values text[], start board, moves move[], result text
//          [, suffixes text[], comments text[]])
// -> text: one game in PGN export format (what to_pgn(game) calls), with a suffix ("?!")
// and a comment after each move when they are given ('' for none).
PGMATE_FUNCTION(pgn_text) {
  const std::vector<std::string> names = text_array(fcinfo, 0, "tag_names");
  const std::vector<std::string> values = text_array(fcinfo, 1, "tag_values");
  if (names.size() != values.size())
    throw pg::SqlError(ERRCODE_ARRAY_SUBSCRIPT_ERROR, "tag_names and tag_values differ in length");
  chess::PgnTags tags;
  for (size_t i = 0; i < names.size(); ++i) tags.emplace_back(names[i], values[i]);
  const chess::Board start = pg::board_arg(fcinfo, 2);
  std::vector<chess::Move> moves;
  chess::Board b = start;
  for (Datum d : pg::array_elements(fcinfo, 3, "moves")) {
    const chess::Move m = chess::resolve_move(b, pg::move_from_datum(d));
    moves.push_back(m);
    chess::play_checked(b, m);
  }
  chess::PgnMoveNotes notes;
  if (PG_NARGS() > 5) {
    notes.suffix = text_array(fcinfo, 5, "suffixes");
    notes.comments = text_array(fcinfo, 6, "comments");
  }
  try {
    return pg::text_datum(chess::to_pgn(tags, start, moves, pg::text_arg(fcinfo, 4), notes));
  } catch (const std::invalid_argument& e) {
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, e.what());
  }
}
