#include "procedure.h"

#include <string_view>

#include "arena/uci_engine.h"
#include "common/random.h"

extern "C" {
#include "catalog/namespace.h"
#include "executor/spi.h"
#include "storage/ipc.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
}

namespace pgmate::pg {

namespace {
// A backend that ends with FATAL (pg_terminate_backend, a client gone, postmaster shutdown)
// leaves through proc_exit without unwinding the match, so its engines' destructors never
// run: their process groups are killed here instead.
void kill_engines_at_exit(int, Datum) { arena::kill_live_engine_groups(); }

}  // namespace

void kill_engines_when_the_backend_exits() {
  static bool registered = false;
  if (registered) return;
  pg_call([] { before_shmem_exit(kill_engines_at_exit, 0); });
  registered = true;
}

// A spec as SQL gives it: a JSON string (the shorthand) or a flat object.
arena::PlayerSpec player_spec_of_jsonb(Datum value, const char* what) {
  const std::string type = pinned_sql([&] {
    Oid types[1] = {JSONBOID};
    Datum values[1] = {value};
    SPI_execute_with_args("SELECT pg_catalog.jsonb_typeof($1), $1 #>> '{}'", 1, types, values, nullptr, false, 0);
    std::string t = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
    if (t == "string") t += ":" + std::string(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
    return t;
  });
  try {
    if (type.rfind("string:", 0) == 0) return arena::parse_player_spec(type.substr(7));
    if (type != "object")
      throw std::invalid_argument(std::string(what) + " must be a player spec: a JSON string such as '\"mcts:200\"' or "
                                  "an object such as '{\"type\": \"random\"}'");
    std::vector<std::pair<std::string, std::string>> fields;
    for (auto& o : read_options(value, what)) {
      if (!o.value) throw std::invalid_argument(std::string(what) + ": " + o.key + " must not be null");
      fields.emplace_back(o.key, *o.value);
    }
    return arena::player_spec_from_fields(fields);
  } catch (const std::invalid_argument& e) {
    throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE, std::string(what) + ": " + e.what());
  }
}

int int_arg(FunctionCallInfo fcinfo, int n, const char* name) {
  if (PG_ARGISNULL(n)) throw SqlError(ERRCODE_NULL_VALUE_NOT_ALLOWED, std::string(name) + " must not be NULL");
  return PG_GETARG_INT32(n);
}

std::vector<Option> read_options(Datum options, const char* what) {
  const char* type = pinned_sql([&] {
    Oid types[1] = {JSONBOID};
    Datum values[1] = {options};
    SPI_execute_with_args("SELECT pg_catalog.jsonb_typeof($1)", 1, types, values, nullptr, false, 0);
    return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  });
  if (std::string_view(type) != "object")
    throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE, std::string(what) + " must be a JSON object like '{\"seed\": 1}', not " +
                                                        (std::string_view(type) == "array" ? "an " : "a ") + type);
  SPITupleTable* table = pinned_sql([&] {
    Oid types[1] = {JSONBOID};
    Datum values[1] = {options};
    SPI_execute_with_args("SELECT key, value FROM pg_catalog.jsonb_each_text($1)", 1, types, values, nullptr, false, 0);
    return SPI_tuptable;
  });
  const uint64 rows = table->numvals;
  std::vector<Option> out;
  for (uint64 i = 0; i < rows; ++i) {
    const char* key = pg_call([&] { return SPI_getvalue(table->vals[i], table->tupdesc, 1); });
    const char* value = pg_call([&] { return SPI_getvalue(table->vals[i], table->tupdesc, 2); });
    out.push_back({key, value ? std::optional<std::string>(value) : std::nullopt});
  }
  pg_call([&] { SPI_freetuptable(table); });
  return out;
}

std::uint64_t fresh_seed() {
  std::uint64_t seed = 0;
  if (!pg_strong_random(&seed, sizeof seed)) seed = mcts::mix64(std::uint64_t(GetCurrentTimestamp()) ^ std::uint64_t(MyProcPid));
  return seed >> 16;
}

// From the catalog, not a query of pgmate.games: knowing a column's type needs no privilege
// on the table (a training query may read no game at all).
SqlTypes sql_types() {
  return pg_call([] {
    const Oid games = RangeVarGetRelid(makeRangeVar(const_cast<char*>("pgmate"), const_cast<char*>("games"), -1), NoLock,
                                       false);
    SqlTypes types;
    types.board = get_atttype(games, get_attnum(games, "start"));
    types.move_array = get_atttype(games, get_attnum(games, "moves"));
    types.move = get_element_type(types.move_array);
    return types;
  });
}

bool nonatomic_call(FunctionCallInfo fcinfo) {
  return fcinfo->context && IsA(fcinfo->context, CallContext) && !castNode(CallContext, fcinfo->context)->atomic;
}

}  // namespace pgmate::pg
