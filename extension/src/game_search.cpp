// Material and pattern search (extension/sql/84_game_search.sql): thin wrappers around
// core/gamedb/game_search. The scans are plain functions over (start, moves), parallel
// safe, so PostgreSQL spreads a search over every core.
#include "game_search.h"

#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "chess/fen.h"
#include "datum.h"
#include "guard.h"
#include "position_index.h"

using namespace pgmate;

namespace {

// The moves of argument n; the vector is reused from call to call (a scan calls once a game).
// A stored move is a Move's 16 bits (move_from_datum), so the array is copied whole.
std::span<const chess::Move> moves_arg(FunctionCallInfo fcinfo, int n) {
  static_assert(sizeof(chess::Move) == sizeof(std::uint16_t) && std::is_trivially_copyable_v<chess::Move>);
  static std::vector<chess::Move> moves;
  const std::span<const std::uint16_t> bits = pg::move_bits_arg(fcinfo, n, "moves");
  moves.resize(bits.size());
  if (!bits.empty()) std::memcpy(static_cast<void*>(moves.data()), bits.data(), bits.size_bytes());
  return moves;
}

// Text argument n parsed by `parse` (Pattern::parse, Material::parse), kept with the call
// site (fn_extra) while the text stays the same: a scan passes one pattern a million times,
// and parsing it each time cost as much as the replays the signatures leave.
template <class T>
const T& parsed_text_arg(FunctionCallInfo fcinfo, int n, T (*parse)(std::string_view)) {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  struct Cache {
    T value;
    std::size_t length, capacity;
    char* text;
  };
  text* t = pg::pg_call([&] { return PG_GETARG_TEXT_PP(n); });
  const std::string_view given(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
  auto* cache = fcinfo->flinfo ? static_cast<Cache*>(fcinfo->flinfo->fn_extra) : nullptr;
  if (cache && std::string_view(cache->text, cache->length) == given) return cache->value;
  const T value = parse(given);  // a bad text throws before anything is kept
  if (!fcinfo->flinfo) {
    static T last;
    last = value;
    return last;
  }
  pg::pg_call([&] {
    MemoryContext context = fcinfo->flinfo->fn_mcxt;
    if (!cache) {
      cache = static_cast<Cache*>(MemoryContextAllocZero(context, sizeof(Cache)));
      fcinfo->flinfo->fn_extra = cache;
    }
    if (cache->capacity < given.size() + 1) {  // texts that change row by row reuse the space
      if (cache->text) pfree(cache->text);
      cache->text = static_cast<char*>(MemoryContextAlloc(context, given.size() + 1));
      cache->capacity = given.size() + 1;
    }
  });
  cache->value = value;
  std::memcpy(cache->text, given.data(), given.size());
  cache->length = given.size();
  return cache->value;
}

const gamedb::Pattern& pattern_arg(FunctionCallInfo fcinfo, int n) {
  return parsed_text_arg<gamedb::Pattern>(fcinfo, n, &gamedb::Pattern::parse);
}

const gamedb::Material& material_arg(FunctionCallInfo fcinfo, int n) {
  return parsed_text_arg<gamedb::Material>(fcinfo, n, &gamedb::Material::parse);
}

}  // namespace

namespace pgmate::pg {

// A row's generated columns and then its CHECK each ask for the same game in turn: the last
// summary is kept with its input's bytes (the packed start and the moves), and given again
// only for exactly those bytes. Its index entries go to remember_game_entries.
const gamedb::GameSummary& game_summary_arg(FunctionCallInfo fcinfo) {
  static std::string last_input;
  static gamedb::GameSummary last;
  const std::span<const std::uint16_t> bits = move_bits_arg(fcinfo, 1, "moves");
  const char* start = DatumGetPointer(PG_GETARG_DATUM(0));
  const bool same = last_input.size() == kBoardSize + bits.size_bytes() &&
                    std::memcmp(last_input.data(), start, kBoardSize) == 0 &&
                    std::memcmp(last_input.data() + kBoardSize, bits.data(), bits.size_bytes()) == 0;
  if (!same) {
    last_input.clear();  // a summary that throws half-made is not kept
    // The same replay yields the game's position index entries, kept for the insert
    // trigger (a row being stored is summarized for its columns and CHECK first).
    static std::vector<gamedb::PositionEntry> entries;
    entries.clear();
    last = gamedb::summarize(board_arg(fcinfo, 0), moves_arg(fcinfo, 1), &entries);
    last_input.assign(start, kBoardSize);
    last_input.append(reinterpret_cast<const char*>(bits.data()), bits.size_bytes());
    if (last.legal) remember_game_entries(last_input, entries);
  }
  return last;
}

}  // namespace pgmate::pg

// material(board) -> text: "KRPvKR".
PGMATE_FUNCTION(board_material) {
  return pg::text_datum(gamedb::Material::of(pg::board_arg(fcinfo, 0)).text());
}

// matches_pattern(board, pattern text) -> bool: the sub-FEN pattern holds on the board.
PGMATE_FUNCTION(matches_pattern) {
  const gamedb::Pattern& pattern = pattern_arg(fcinfo, 1);
  return BoolGetDatum(pattern.matches(pg::board_arg(fcinfo, 0)));
}

// reaches_material(start, moves, material text) -> bool: some position of the game has it.
PGMATE_FUNCTION(reaches_material) {
  const gamedb::Material& material = material_arg(fcinfo, 2);
  return BoolGetDatum(gamedb::reaches_material(pg::board_arg(fcinfo, 0), moves_arg(fcinfo, 1), material));
}

// material_signature(start, moves) -> bigint: pgmate.games.material_signature; NULL for a
// game with an illegal move, so that the table's CHECK reports it as before.
PGMATE_FUNCTION(material_signature) {
  const gamedb::GameSummary& summary = pg::game_summary_arg(fcinfo);
  if (!summary.legal) PG_RETURN_NULL();
  return Int64GetDatum(static_cast<std::int64_t>(summary.material_signature));
}

// may_reach_material(signature bigint, material text) -> bool: false when the game's
// material summary rules the material out (no replay needed).
PGMATE_FUNCTION(may_reach_material) {
  const gamedb::Material& material = material_arg(fcinfo, 1);
  return BoolGetDatum(gamedb::may_reach(static_cast<std::uint64_t>(PG_GETARG_INT64(0)), material));
}

// square_signature(start, moves) -> bytea: pgmate.games.square_signature; NULL for a game
// with an illegal move.
PGMATE_FUNCTION(square_signature) {
  const gamedb::GameSummary& summary = pg::game_summary_arg(fcinfo);
  if (!summary.legal) PG_RETURN_NULL();
  const auto bytes = summary.squares.bytes();
  return pg::pg_call([&] {
    bytea* out = static_cast<bytea*>(palloc(VARHDRSZ + bytes.size()));
    SET_VARSIZE(out, VARHDRSZ + bytes.size());
    std::memcpy(VARDATA(out), bytes.data(), bytes.size());
    return PointerGetDatum(out);
  });
}

// may_match_pattern(signature bytea, pattern text) -> bool: false when the squares the
// game's men stood on rule the pattern out (no replay needed).
PGMATE_FUNCTION(may_match_pattern) {
  bytea* signature = pg::pg_call([&] { return PG_GETARG_BYTEA_PP(0); });
  const auto squares = gamedb::SquareSignature::from_bytes(
      {reinterpret_cast<const std::uint8_t*>(VARDATA_ANY(signature)), VARSIZE_ANY_EXHDR(signature)});
  return BoolGetDatum(pattern_arg(fcinfo, 1).may_match(squares));
}

// reaches_pattern(start, moves, pattern text) -> bool: some position of the game matches.
PGMATE_FUNCTION(reaches_pattern) {
  const gamedb::Pattern& pattern = pattern_arg(fcinfo, 2);
  return BoolGetDatum(gamedb::reaches_pattern(pg::board_arg(fcinfo, 0), moves_arg(fcinfo, 1), pattern));
}
