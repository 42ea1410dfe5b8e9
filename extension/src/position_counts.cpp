// The explorer's per-position counts: kept by the index's trigger, refreshed from the index,
// read by the explorer (position_counts.h).
//
// A counted position is a row of pgmate.position_counts: the set of them changes only with
// a refresh (or a TRUNCATE of the games), which holds the index's exclusive lock and writes a
// new version into pgmate.position_counts_state; every statement that changes games reads
// that version FOR SHARE and takes the counted keys from a cache of this backend's while it
// is the same. A statement's games change the counted rows read FOR UPDATE in key order, so
// that two sessions wait for each other in one order.
#include "position_counts.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "datum.h"
#include "guard.h"
#include "position_index.h"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

namespace pgmate::pg::counts {

bool explorer_counts = true;

// The mean of the ratings given, rounded half away from zero as avg(int)::int rounds it:
// written as one expression, since a subquery per game (avg over unnest) took three times as
// long in a refresh's scan of every game.
const char* const kAverageRatingSql =
    "(CASE WHEN g.tags ->> 'WhiteElo' ~ '^[0-9]{1,4}$' AND g.tags ->> 'BlackElo' ~ '^[0-9]{1,4}$'"
    " THEN round(((g.tags ->> 'WhiteElo')::int + (g.tags ->> 'BlackElo')::int) / 2.0)::int"
    " WHEN g.tags ->> 'WhiteElo' ~ '^[0-9]{1,4}$' THEN (g.tags ->> 'WhiteElo')::int"
    " WHEN g.tags ->> 'BlackElo' ~ '^[0-9]{1,4}$' THEN (g.tags ->> 'BlackElo')::int END)";

namespace {

constexpr int kDefaultMinGames = 100;
constexpr std::size_t kRowsPerInsert = 2000;

// This backend's copy of the counted keys, and the version it is of.
struct CountedKeys {
  std::int64_t version = 0;
  bool loaded = false;
  std::vector<std::uint64_t> keys;  // sorted
} counted;

struct State {
  bool stale = false;
  int min_games = kDefaultMinGames;
  std::int64_t version = 0;
};

// Whether the counts' tables exist: not in the steps of an upgrade from before 0.17.0, which
// run this code (a step that builds the index, or adds games).
bool tables_exist() {
  return pg_call([] {
    const Oid schema = get_namespace_oid("pgmate", true);
    return OidIsValid(schema) && OidIsValid(get_relname_relid("position_counts_state", schema));
  });
}

State read_state(const char* lock_clause) {
  const std::string sql =
      std::string("SELECT stale, min_games, version FROM pgmate.position_counts_state") + lock_clause;
  State s;
  pinned_sql([&] {
    const int rc = SPI_execute(sql.c_str(), false, 0);
    if (rc < 0) elog(ERROR, "position counts: SPI error %s", SPI_result_code_string(rc));
    if (SPI_processed != 1) elog(ERROR, "position counts: pgmate.position_counts_state must hold one row");
    bool is_null;
    HeapTuple t = SPI_tuptable->vals[0];
    s.stale = DatumGetBool(SPI_getbinval(t, SPI_tuptable->tupdesc, 1, &is_null));
    s.min_games = DatumGetInt32(SPI_getbinval(t, SPI_tuptable->tupdesc, 2, &is_null));
    s.version = DatumGetInt64(SPI_getbinval(t, SPI_tuptable->tupdesc, 3, &is_null));
  });
  return s;
}

void exec(const char* sql, int nargs = 0, Oid* types = nullptr, Datum* values = nullptr) {
  pinned_sql([&] {
    const int rc = SPI_execute_with_args(sql, nargs, types, values, nullptr, false, 0);
    if (rc < 0) elog(ERROR, "position counts: SPI error %s in: %s", SPI_result_code_string(rc), sql);
  });
}

void load_keys(std::int64_t version) {
  counted.loaded = false;
  counted.keys.clear();
  exec("SELECT key FROM pgmate.position_counts");
  pg_call([&] {
    for (std::uint64_t i = 0; i < SPI_processed; ++i) {
      bool is_null;
      counted.keys.push_back(unsql_key(DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &is_null))));
    }
  });
  std::sort(counted.keys.begin(), counted.keys.end());
  counted.version = version;
  counted.loaded = true;
}

const gamedb::GameFacts& facts_of(std::vector<gamedb::GameFacts>& facts, std::uint32_t game) {
  const auto at = std::lower_bound(facts.begin(), facts.end(), game,
                                   [](const gamedb::GameFacts& f, std::uint32_t g) { return f.game < g; });
  if (at == facts.end() || at->game != game)
    throw SqlError(ERRCODE_INTERNAL_ERROR, "position counts: game " + std::to_string(game) +
                                               " is in the position index but not in pgmate.games; "
                                               "SELECT pgmate.position_index_rebuild() builds both again");
  return *at;
}

void sort_facts(std::vector<gamedb::GameFacts>& facts) {
  std::sort(facts.begin(), facts.end(), [](const auto& a, const auto& b) { return a.game < b.game; });
}

Datum bytea_datum(const std::string& bytes) {
  bytea* b = static_cast<bytea*>(palloc(VARHDRSZ + bytes.size()));
  SET_VARSIZE(b, VARHDRSZ + bytes.size());
  std::memcpy(VARDATA(b), bytes.data(), bytes.size());
  return PointerGetDatum(b);
}

// Writes rows (key, counts) with one statement: INSERT for new rows, else UPDATE.
void write_rows(const std::vector<std::pair<std::uint64_t, gamedb::PositionCounts>>& rows, bool insert) {
  if (rows.empty()) return;
  std::vector<std::string> encoded;
  encoded.reserve(rows.size());
  for (const auto& [key, c] : rows) {
    try {
      encoded.push_back(c.encode());
    } catch (const std::invalid_argument& e) {
      throw SqlError(ERRCODE_DATA_CORRUPTED, std::string(e.what()) + " at position key " + std::to_string(key) +
                                                 "; SELECT pgmate.position_counts_refresh() counts them again");
    }
  }
  pinned_sql([&] {
    const int n = static_cast<int>(rows.size());
    Datum* keys = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* games = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* data = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    for (int i = 0; i < n; ++i) {
      keys[i] = Int64GetDatum(sql_key(rows[i].first));
      games[i] = Int64GetDatum(rows[i].second.games());
      data[i] = bytea_datum(encoded[i]);
    }
    Oid types[3] = {INT8ARRAYOID, INT8ARRAYOID, BYTEAARRAYOID};
    Datum values[3] = {PointerGetDatum(construct_array(keys, n, INT8OID, 8, true, TYPALIGN_DOUBLE)),
                       PointerGetDatum(construct_array(games, n, INT8OID, 8, true, TYPALIGN_DOUBLE)),
                       PointerGetDatum(construct_array(data, n, BYTEAOID, -1, false, TYPALIGN_INT))};
    const char* sql = insert ? "INSERT INTO pgmate.position_counts (key, games, data) "
                               "SELECT * FROM unnest($1, $2, $3)"
                             : "UPDATE pgmate.position_counts c SET games = u.games, data = u.data "
                               "FROM unnest($1, $2, $3) u(key, games, data) WHERE c.key = u.key";
    const int rc = SPI_execute_with_args(sql, 3, types, values, nullptr, false, 0);
    if (rc < 0) elog(ERROR, "position counts: SPI error %s writing counts", SPI_result_code_string(rc));
  });
}

gamedb::PositionCounts decode_counts(HeapTuple row, TupleDesc desc, int column, std::uint64_t key) {
  const auto [data, size] = pg_call([&] {
    bool is_null;
    const Datum d = SPI_getbinval(row, desc, column, &is_null);
    if (is_null) elog(ERROR, "position counts: a row without data");
    bytea* b = DatumGetByteaPP(d);
    return std::pair<const void*, std::size_t>(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
  });
  try {
    return gamedb::PositionCounts::decode(data, size);
  } catch (const std::invalid_argument& e) {
    throw SqlError(ERRCODE_DATA_CORRUPTED, std::string(e.what()) + " at position key " + std::to_string(key));
  }
}

}  // namespace

std::string games_with_facts(const std::string& from) {
  return std::string("SELECT g.id, g.start, g.moves, g.result, g.speed, ") + kAverageRatingSql + ", g.date FROM " +
         from + " g";
}

gamedb::GameFacts facts_of_row(HeapTuple row, TupleDesc desc) {
  gamedb::GameFacts f;
  std::string speed, date;
  pg_call([&] {
    bool is_null;
    f.game = static_cast<std::uint32_t>(DatumGetInt64(SPI_getbinval(row, desc, 1, &is_null)));
    const Datum s = SPI_getbinval(row, desc, 5, &is_null);
    if (!is_null) speed = TextDatumGetCString(s);
    const Datum r = SPI_getbinval(row, desc, 6, &is_null);
    if (!is_null) f.rating = DatumGetInt32(r);
    const Datum d = SPI_getbinval(row, desc, 7, &is_null);
    if (!is_null) date = TextDatumGetCString(d);
  });
  f.speed = gamedb::speed_code(speed).value_or(0);
  f.month = gamedb::GameMonth::of_date(date);
  return f;
}

bool maintained() {
  if (!tables_exist()) return false;
  const State s = read_state(" FOR SHARE");
  if (s.stale) return false;
  if (!counted.loaded || counted.version != s.version) load_keys(s.version);
  return !counted.keys.empty();
}

void mark_stale() {
  if (!tables_exist()) return;
  // Not FOR SHARE: two importers holding it would each wait for the other's UPDATE.
  const State s = read_state("");
  if (s.stale) return;
  exec("SELECT 1 FROM pgmate.position_counts LIMIT 1");
  if (SPI_processed == 0) return;
  exec("UPDATE pgmate.position_counts_state SET stale = true WHERE NOT stale");
}

void apply(std::span<const gamedb::PositionEntry> entries, std::vector<gamedb::GameFacts>& facts, int sign) {
  if (!counted.loaded || counted.keys.empty()) return;
  sort_facts(facts);
  std::map<std::uint64_t, gamedb::PositionCounts> deltas;
  for (std::size_t i = 0; i < entries.size();) {
    if (i % 4096 == 0) check_for_interrupts();
    const std::uint64_t key = entries[i].key;
    std::size_t end = i;
    while (end < entries.size() && entries[end].key == key) ++end;
    if (std::binary_search(counted.keys.begin(), counted.keys.end(), key)) {
      gamedb::PositionCounts& d = deltas[key];
      for (std::size_t k = i; k < end; ++k) d.add(entries[k].code, facts_of(facts, entries[k].game), sign);
    }
    i = end;
  }
  if (deltas.empty()) return;
  // The rows, locked in key order (the signed SQL order of the keys is their unsigned one).
  std::vector<std::pair<std::uint64_t, gamedb::PositionCounts>> rows;
  pinned_sql([&] {
    const int n = static_cast<int>(deltas.size());
    Datum* keys = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    int i = 0;
    for (const auto& [key, d] : deltas) keys[i++] = Int64GetDatum(sql_key(key));
    Oid types[1] = {INT8ARRAYOID};
    Datum values[1] = {PointerGetDatum(construct_array(keys, n, INT8OID, 8, true, TYPALIGN_DOUBLE))};
    const int rc = SPI_execute_with_args(
        "SELECT key, data FROM pgmate.position_counts WHERE key = ANY ($1) ORDER BY key FOR UPDATE", 1, types, values,
        nullptr, false, 0);
    if (rc < 0) elog(ERROR, "position counts: SPI error %s reading counts", SPI_result_code_string(rc));
  });
  SPITupleTable* table = SPI_tuptable;
  for (std::uint64_t i = 0; i < SPI_processed; ++i) {
    const std::uint64_t key = unsql_key(pg_call([&] {
      bool is_null;
      return DatumGetInt64(SPI_getbinval(table->vals[i], table->tupdesc, 1, &is_null));
    }));
    gamedb::PositionCounts c = decode_counts(table->vals[i], table->tupdesc, 2, key);
    c.add(deltas.at(key));
    rows.emplace_back(key, std::move(c));
  }
  pg_call([&] { SPI_freetuptable(table); });
  write_rows(rows, /*insert=*/false);
}

void clear() {
  counted.loaded = false;
  if (!tables_exist()) return;
  exec("TRUNCATE pgmate.position_counts");
  exec("UPDATE pgmate.position_counts_state SET stale = false, version = txid_current(), refreshed_at = now()");
}

std::int64_t refresh(std::optional<int> min_games) {
  lock_position_index(/*exclusive=*/true);
  if (!tables_exist()) return 0;
  const State s = read_state(" FOR UPDATE");
  const int least = min_games.value_or(s.min_games);
  if (least < 1)
    throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "min_games must be 1 or more, not " + std::to_string(least));

  // What the counts know of every game, read a batch at a time.
  std::vector<gamedb::GameFacts> facts;
  {
    const std::string sql = games_with_facts("pgmate.games");
    Portal cursor = pinned_sql([&] { return SPI_cursor_open_with_args(nullptr, sql.c_str(), 0, nullptr, nullptr, nullptr, false, 0); });
    for (;;) {
      check_for_interrupts();
      pinned_sql([&] { SPI_cursor_fetch(cursor, true, 10000); });
      if (SPI_processed == 0) break;
      for (std::uint64_t i = 0; i < SPI_processed; ++i) facts.push_back(facts_of_row(SPI_tuptable->vals[i], SPI_tuptable->tupdesc));
      pg_call([] { SPI_freetuptable(SPI_tuptable); });
    }
    pg_call([&] { SPI_cursor_close(cursor); });
    sort_facts(facts);
  }

  exec("DELETE FROM pgmate.position_counts");
  // Every entry in key order: a key's first `least` entries wait in `pending`; once it has
  // that many, they and the rest go into its counts.
  std::int64_t counted_positions = 0;
  std::vector<std::pair<std::uint64_t, gamedb::PositionCounts>> rows;
  std::vector<gamedb::PositionEntry> pending;
  gamedb::PositionCounts current;
  bool counting = false, any = false;
  std::uint64_t key = 0;
  const auto finish_key = [&] {
    if (counting) {
      rows.emplace_back(key, std::move(current));
      ++counted_positions;
      if (rows.size() >= kRowsPerInsert) {
        write_rows(rows, /*insert=*/true);
        rows.clear();
      }
    }
    current = gamedb::PositionCounts();
    pending.clear();
    counting = false;
  };
  for_each_index_entry([&](const gamedb::PositionEntry& e) {
    if (!any || e.key != key) {
      if (any) finish_key();
      key = e.key;
      any = true;
    }
    if (counting) {
      current.add(e.code, facts_of(facts, e.game));
      return;
    }
    pending.push_back(e);
    if (pending.size() >= static_cast<std::size_t>(least)) {
      for (const auto& p : pending) current.add(p.code, facts_of(facts, p.game));
      pending.clear();
      counting = true;
    }
  });
  if (any) finish_key();
  write_rows(rows, /*insert=*/true);

  Oid types[1] = {INT4OID};
  Datum values[1] = {Int32GetDatum(least)};
  exec("UPDATE pgmate.position_counts_state SET stale = false, min_games = $1, version = txid_current(), "
       "refreshed_at = now()",
       1, types, values);
  counted.loaded = false;  // loaded again, with this version, by the next change
  return counted_positions;
}

std::optional<gamedb::PositionCounts> read(std::uint64_t key) {
  if (!explorer_counts) return std::nullopt;
  // A role that may read the index but was not granted the counts (they came later) still
  // gets its answer, from the games.
  for (const char* table : {"position_counts", "position_counts_state"}) {
    const bool may = pg_call([&] {
      const Oid rel = get_relname_relid(table, get_namespace_oid("pgmate", false));
      return OidIsValid(rel) && pg_class_aclcheck(rel, GetUserId(), ACL_SELECT) == ACLCHECK_OK;
    });
    if (!may) return std::nullopt;
  }
  static SPIPlanPtr plan = nullptr;
  std::optional<gamedb::PositionCounts> found;
  pinned_sql([&] {
    if (!plan) {
      Oid types[1] = {INT8OID};
      SPIPlanPtr p = SPI_prepare(
          "SELECT c.data FROM pgmate.position_counts c, pgmate.position_counts_state s WHERE c.key = $1 AND NOT s.stale",
          1, types);
      if (!p) elog(ERROR, "position counts: cannot prepare the search");
      SPI_keepplan(p);
      plan = p;
    }
    Datum values[1] = {Int64GetDatum(sql_key(key))};
    const int rc = SPI_execute_plan(plan, values, nullptr, true, 1);
    if (rc != SPI_OK_SELECT) elog(ERROR, "position counts: SPI error %s", SPI_result_code_string(rc));
  });
  if (SPI_processed == 1) found = decode_counts(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, key);
  pg_call([] { SPI_freetuptable(SPI_tuptable); });
  return found;
}

}  // namespace pgmate::pg::counts
