// The opening explorer (extension/sql/82_position_index.sql): the moves played from a
// position with their games and results, from the position's counts where they are kept
// (position_counts.h) and the filters fall on their speeds, rating bands and months; else
// from the index's entries, and for filters from the position's games in pgmate.games.
// Both ways tally into one gamedb::ExplorerTally and filter months by one MonthBound, so
// they give the same rows.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chess/notation.h"
#include "datum.h"
#include "gamedb/position_counts.h"
#include "gamedb/position_index.h"
#include "guard.h"
#include "pg_headers.h"
#include "position_counts.h"
#include "position_index.h"

extern "C" {
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
}

namespace pgmate {
namespace {

using pg::pg_call;

// The explorer's rows from a tally, most played first (ties by move): move, san, games,
// white_wins, draws, black_wins, score, average_rating, last_played (a result of 7 columns
// leaves out the last two).
struct TallyRow {
  chess::Move move;
  std::string san;
  gamedb::ExplorerMove counts;
};
// The tally's moves in its order, the games that ended here left out.
std::vector<TallyRow> tally_rows(const chess::Board& b, const gamedb::ExplorerTally& tally) {
  std::vector<TallyRow> rows;
  for (const auto& m : tally.moves()) {
    if (m.move_bits == 0) continue;
    const chess::Move move = gamedb::EntryCode::move(b, m.move_bits);
    rows.push_back({move, chess::to_san(b, move), m});
  }
  return rows;
}

Datum explorer_rows(FunctionCallInfo fcinfo, const chess::Board& b, const gamedb::ExplorerTally& tally) {
  const std::vector<TallyRow> rows = tally_rows(b, tally);
  pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (const TallyRow& r : rows) {
      const auto& c = r.counts;
      const std::uint64_t decided = c.white_wins + c.draws + c.black_wins;
      const std::optional<std::int64_t> rating = c.average_rating();
      Datum values[9] = {pg::move_to_datum(r.move),
                         CStringGetTextDatum(r.san.c_str()),
                         Int64GetDatum(static_cast<std::int64_t>(c.games)),
                         Int64GetDatum(static_cast<std::int64_t>(c.white_wins)),
                         Int64GetDatum(static_cast<std::int64_t>(c.draws)),
                         Int64GetDatum(static_cast<std::int64_t>(c.black_wins)),
                         Float8GetDatum(decided ? (c.white_wins + 0.5 * c.draws) / static_cast<double>(decided) : 0),
                         Int32GetDatum(static_cast<int>(rating.value_or(0))),
                         c.last_played.known() ? CStringGetTextDatum(c.last_played.text().c_str()) : Datum(0)};
      bool nulls[9] = {false, false, false, false, false, false, decided == 0, !rating, !c.last_played.known()};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}

// The explorer's filters, checked (22023 naming what is wrong) and read.
struct Filters {
  std::uint8_t speeds = 0;  // a bit per gamedb::speed_code; 0: any
  std::optional<std::int64_t> min_rating, max_rating;
  std::optional<gamedb::MonthBound> since, until;
  bool by_players_or_source = false;  // player, white, black, source: only the games know
};

std::optional<std::int64_t> rating_limit(const char* name, const char* text) {
  if (!text) return std::nullopt;
  const std::string_view t(text);
  std::int32_t v = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (error != std::errc() || end != t.data() + t.size())
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       std::string("explorer filter ") + name + " must be an integer rating, not " + std::string(t));
  return v;
}

std::optional<gamedb::MonthBound> month_limit(const char* name, const char* text) {
  if (!text) return std::nullopt;
  const auto bound = gamedb::MonthBound::parse(text);
  if (!bound)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, std::string("explorer filter ") + name +
                                                            " must be a year or a month (2019 or 2019.06), not " + text);
  return bound;
}

Filters read_filters(Datum filters) {
  pg::pinned_sql([&] {
    Oid types[1] = {JSONBOID};
    Datum values[1] = {filters};
    SPI_execute_with_args(
        "WITH f AS (SELECT $1 AS filters, CASE jsonb_typeof($1 -> 'speed')"
        "             WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text($1 -> 'speed'))"
        "             WHEN 'string' THEN ARRAY[$1 ->> 'speed'] END AS speeds"
        "           WHERE jsonb_typeof($1) = 'object')"
        " SELECT jsonb_typeof($1), $1::text,"
        "        (SELECT string_agg(k, ', ') FROM f, jsonb_object_keys(f.filters) k"
        "         WHERE k NOT IN ('min_rating', 'max_rating', 'since', 'until', 'player', 'white', 'black', 'source',"
        "                         'speed')),"
        "        (SELECT f.filters ? 'speed' AND (f.speeds IS NULL OR cardinality(f.speeds) = 0 OR NOT f.speeds <@"
        "                ARRAY['ultraBullet', 'bullet', 'blitz', 'rapid', 'classical', 'correspondence']) FROM f),"
        "        ($1 -> 'speed')::text, (SELECT array_to_string(f.speeds, ',') FROM f),"
        "        $1 ->> 'min_rating', $1 ->> 'max_rating', $1 ->> 'since', $1 ->> 'until',"
        "        $1 ?| ARRAY['player', 'white', 'black', 'source']",
        1, types, values, nullptr, true, 1);
  });
  const auto value = [](int column) -> const char* {
    return pg_call([&] { return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column); });
  };
  const auto text = [&](int column) -> std::string {
    const char* v = value(column);
    return v ? v : "";
  };
  if (text(1) != "object")
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "explorer filters must be a JSON object, not " + text(2));
  if (!text(3).empty())
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "unknown explorer filter: " + text(3) +
                           " (known: min_rating, max_rating, since, until, player, white, black, source, speed)");
  if (text(4) == "t")
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "explorer filter speed must be one of ultraBullet, bullet, blitz, rapid, classical, "
                       "correspondence or an array of them, not " + text(5));
  Filters f;
  const std::string speeds = text(6);
  for (std::size_t at = 0; at < speeds.size();) {
    const std::size_t comma = std::min(speeds.find(',', at), speeds.size());
    f.speeds |= std::uint8_t(1u << *gamedb::speed_code(speeds.substr(at, comma - at)));
    at = comma + 1;
  }
  f.min_rating = rating_limit("min_rating", value(7));
  f.max_rating = rating_limit("max_rating", value(8));
  f.since = month_limit("since", value(9));
  f.until = month_limit("until", value(10));
  f.by_players_or_source = text(11) == "t";
  return f;
}

// The games among $1 that pass the filters the months aside ($2 the filters, $3 and $4 the
// rating limits): id, the players' average rating, date.
const std::string& filtered_games_sql() {
  static const std::string sql =
      std::string(
          "WITH f AS (SELECT CASE jsonb_typeof($2 -> 'speed')"
          "             WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text($2 -> 'speed'))"
          "             WHEN 'string' THEN ARRAY[$2 ->> 'speed'] END AS speeds)"
          " SELECT g.id, p.rating, g.date"
          " FROM pgmate.games g CROSS JOIN f CROSS JOIN LATERAL (SELECT ") +
      pg::counts::kAverageRatingSql +
      " AS rating) p"
      " WHERE g.id = ANY ($1)"
      "   AND ($3::int IS NULL OR p.rating >= $3) AND ($4::int IS NULL OR p.rating <= $4)"
      "   AND ($2 -> 'player' IS NULL OR $2 ->> 'player' IN (g.white, g.black))"
      "   AND ($2 -> 'white' IS NULL OR g.white = $2 ->> 'white')"
      "   AND ($2 -> 'black' IS NULL OR g.black = $2 ->> 'black')"
      "   AND ($2 -> 'source' IS NULL OR g.source = $2 ->> 'source')"
      "   AND (f.speeds IS NULL OR g.speed = ANY (f.speeds))";
  return sql;
}

// Every row of an open cursor, a batch at a time (the start position's games are the whole
// database's); closes it.
void for_each_cursor_row(Portal cursor, const std::function<void(HeapTuple, TupleDesc)>& f) {
  for (;;) {
    pg::check_for_interrupts();
    pg::pinned_sql([&] { SPI_cursor_fetch(cursor, true, 10000); });
    const std::uint64_t n = SPI_processed;
    if (n == 0) break;
    for (std::uint64_t row = 0; row < n; ++row) f(SPI_tuptable->vals[row], SPI_tuptable->tupdesc);
    pg_call([] { SPI_freetuptable(SPI_tuptable); });
  }
  pg_call([&] { SPI_cursor_close(cursor); });
}

// The tally of the position's games that pass the filters, read from pgmate.games.
void tally_games(const chess::Board& b, Datum filters, const Filters& f, gamedb::ExplorerTally& tally) {
  std::vector<std::pair<std::uint32_t, std::uint16_t>> entries;  // game, code: the games that went on
  pg::for_each_key_entry(b.key, [&](const gamedb::BlockView& v, std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      if (!gamedb::EntryCode::ends_here(v.code(i))) entries.emplace_back(v.game(i), v.code(i));
  });
  if (entries.empty()) return;
  std::sort(entries.begin(), entries.end());
  Portal cursor = pg::pinned_sql([&] {
    Datum* ids = static_cast<Datum*>(palloc(entries.size() * sizeof(Datum)));
    for (std::size_t i = 0; i < entries.size(); ++i) ids[i] = Int64GetDatum(std::int64_t(entries[i].first));
    Oid types[4] = {INT8ARRAYOID, JSONBOID, INT4OID, INT4OID};
    Datum values[4] = {PointerGetDatum(construct_array(ids, int(entries.size()), INT8OID, 8, true, TYPALIGN_DOUBLE)),
                       filters, Int32GetDatum(int(f.min_rating.value_or(0))), Int32GetDatum(int(f.max_rating.value_or(0)))};
    const char nulls[4] = {' ', ' ', f.min_rating ? ' ' : 'n', f.max_rating ? ' ' : 'n'};
    return SPI_cursor_open_with_args(nullptr, filtered_games_sql().c_str(), 4, types, values, nulls, true, 0);
  });
  for_each_cursor_row(cursor, [&](HeapTuple t, TupleDesc d) {
    bool id_null = false, rating_null = false;
    std::int64_t id = 0;
    int rating = 0;
    const char* date = nullptr;
    pg_call([&] {
      id = DatumGetInt64(SPI_getbinval(t, d, 1, &id_null));
      const Datum r = SPI_getbinval(t, d, 2, &rating_null);
      if (!rating_null) rating = DatumGetInt32(r);
      date = SPI_getvalue(t, d, 3);
    });
    const auto month = gamedb::GameMonth::of_date(date ? date : "");
    if (date) pg_call([&] { pfree(const_cast<char*>(date)); });
    if ((f.since && !f.since->at_or_before(month)) || (f.until && !f.until->at_or_after(month))) return;
    const auto at = std::lower_bound(entries.begin(), entries.end(), std::pair{std::uint32_t(id), std::uint16_t(0)});
    if (id_null || at == entries.end() || at->first != std::uint32_t(id)) return;
    tally.add(at->second, rating_null ? std::nullopt : std::optional<int>(rating), month);
  });
}

// The tally of the position's games: all of them (no filters), or those that pass the
// filters; from the counts where they can answer.
void explorer_tally(const chess::Board& b, std::optional<Datum> filters, gamedb::ExplorerTally& tally) {
  if (!filters) {
    if (const auto counts = pg::counts::read(b.key)) {
      counts->tally({}, tally);
      return;
    }
    pg::for_each_key_entry(b.key, [&](const gamedb::BlockView& v, std::size_t first, std::size_t last) {
      for (std::size_t i = first; i < last; ++i) tally.add(v.code(i));
    });
    return;
  }
  const Filters f = read_filters(*filters);
  const auto bands = gamedb::CountFilter::bands_of(f.min_rating, f.max_rating);
  std::optional<gamedb::PositionCounts> counts;
  if (!f.by_players_or_source && bands) counts = pg::counts::read(b.key);
  if (counts) {
    counts->tally({f.speeds, f.min_rating || f.max_rating ? bands : std::nullopt, f.since, f.until}, tally);
  } else {
    tally_games(b, *filters, f, tally);
  }
}

}  // namespace
}  // namespace pgmate

using namespace pgmate;

// explorer(position) -> (move, san, games, white_wins, draws, black_wins, score)
PGMATE_FUNCTION(explorer) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  gamedb::ExplorerTally tally;
  pg_call([] { SPI_connect(); });
  explorer_tally(b, std::nullopt, tally);
  pg_call([] { SPI_finish(); });
  return explorer_rows(fcinfo, b, tally);
}

// explorer(position, filters) -> (..., average_rating, last_played): the same tally over the
// games of the position that pass the filters, from the position's counts when they can
// answer, else read from pgmate.games (as fast as the position is rare).
PGMATE_FUNCTION(explorer_filtered) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  gamedb::ExplorerTally tally;
  pg_call([] { SPI_connect(); });
  explorer_tally(b, PG_GETARG_DATUM(1), tally);
  pg_call([] { SPI_finish(); });
  return explorer_rows(fcinfo, b, tally);
}

// explorer_parts(position, filters DEFAULT NULL) -> (move, move_bits, san, games, white_wins,
// draws, black_wins, rated, rating_sum, last_month, last_played): the tally's sums, which
// add up across servers (pgmate_cluster combines every shard's); NULL filters: the plain
// explorer's games.
PGMATE_FUNCTION(explorer_parts) {
  if (PG_ARGISNULL(0)) {
    pg_call([&] { InitMaterializedSRF(fcinfo, 0); });
    return Datum(0);
  }
  const chess::Board b = pg::board_arg(fcinfo, 0);
  gamedb::ExplorerTally tally;
  pg_call([] { SPI_connect(); });
  explorer_tally(b, PG_ARGISNULL(1) ? std::nullopt : std::optional<Datum>(PG_GETARG_DATUM(1)), tally);
  pg_call([] { SPI_finish(); });
  const std::vector<TallyRow> rows = tally_rows(b, tally);
  pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (const TallyRow& r : rows) {
      const auto& c = r.counts;
      const bool month = c.last_played.known();
      Datum values[11] = {pg::move_to_datum(r.move),
                          Int32GetDatum(c.move_bits),
                          CStringGetTextDatum(r.san.c_str()),
                          Int64GetDatum(std::int64_t(c.games)),
                          Int64GetDatum(std::int64_t(c.white_wins)),
                          Int64GetDatum(std::int64_t(c.draws)),
                          Int64GetDatum(std::int64_t(c.black_wins)),
                          Int64GetDatum(std::int64_t(c.rated)),
                          Int64GetDatum(std::int64_t(c.rating_sum)),
                          Int32GetDatum(std::int32_t(c.last_played.code())),
                          month ? CStringGetTextDatum(c.last_played.text().c_str()) : Datum(0)};
      bool nulls[11] = {false, false, false, false, false, false, false, false, false, !month, !month};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}


namespace pgmate {
namespace {

// The position's top games read from pgmate.games: of every game that reached it, the rated
// ones by the players' average rating (ties: the lower id), at most `wanted`.
std::vector<gamedb::TopGame> top_games_from_games(const chess::Board& b, std::size_t wanted) {
  std::vector<std::uint32_t> games;
  pg::for_each_key_entry(b.key, [&](const gamedb::BlockView& v, std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) games.push_back(v.game(i));
  });
  std::sort(games.begin(), games.end());
  games.erase(std::unique(games.begin(), games.end()), games.end());
  std::vector<gamedb::TopGame> top;
  if (games.empty() || wanted == 0) return top;
  static const std::string sql =
      std::string("SELECT g.id, p.rating FROM pgmate.games g CROSS JOIN LATERAL (SELECT ") +
      pg::counts::kAverageRatingSql + " AS rating) p WHERE g.id = ANY ($1) AND p.rating IS NOT NULL";
  Portal cursor = pg::pinned_sql([&] {
    Datum* ids = static_cast<Datum*>(palloc(games.size() * sizeof(Datum)));
    for (std::size_t i = 0; i < games.size(); ++i) ids[i] = Int64GetDatum(std::int64_t(games[i]));
    Oid types[1] = {INT8ARRAYOID};
    Datum values[1] = {PointerGetDatum(construct_array(ids, int(games.size()), INT8OID, 8, true, TYPALIGN_DOUBLE))};
    return SPI_cursor_open_with_args(nullptr, sql.c_str(), 1, types, values, nullptr, true, 0);
  });
  for_each_cursor_row(cursor, [&](HeapTuple t, TupleDesc d) {
    const gamedb::TopGame g = pg_call([&] {
      bool is_null;
      return gamedb::TopGame{std::uint32_t(DatumGetInt64(SPI_getbinval(t, d, 1, &is_null))),
                             DatumGetInt32(SPI_getbinval(t, d, 2, &is_null))};
    });
    top.insert(std::upper_bound(top.begin(), top.end(), g, gamedb::ranks_above), g);
    if (top.size() > wanted) top.pop_back();
  });
  return top;
}

}  // namespace
}  // namespace pgmate

// explorer_top_games(position, max_games) -> (game, average_rating): the rated games that
// reached the position with the highest players' average, best first (ties: the lower id);
// from the position's counts when they hold them (max_games up to gamedb::kTopGames), else
// read from pgmate.games.
PGMATE_FUNCTION(explorer_top_games) {
  const chess::Board b = pg::board_arg(fcinfo, 0);
  const std::int32_t wanted = PG_GETARG_INT32(1);
  if (wanted < 0)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "max_games must be 0 or more, not " + std::to_string(wanted));
  pg_call([] { SPI_connect(); });
  std::optional<std::vector<gamedb::TopGame>> top;
  if (std::size_t(wanted) <= gamedb::kTopGames)
    if (const auto counts = pg::counts::read(b.key)) top = counts->top_games();
  if (top) {
    if (top->size() > std::size_t(wanted)) top->resize(std::size_t(wanted));
  } else {
    top = top_games_from_games(b, std::size_t(wanted));
  }
  pg_call([] { SPI_finish(); });
  pg_call([&] {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (const gamedb::TopGame& g : *top) {
      Datum values[2] = {Int64GetDatum(std::int64_t(g.game)), Int32GetDatum(g.rating)};
      bool nulls[2] = {false, false};
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  });
  return Datum(0);
}
