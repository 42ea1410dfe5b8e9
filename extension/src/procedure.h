// What the procedures that play games in the backend (pgmate.selfplay, pgmate.arena)
// share: their arguments, options jsonb, seeds and the extension's own SQL types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arena/player_spec.h"
#include "guard.h"

namespace pgmate::pg {

struct Option {
  std::string key;
  std::optional<std::string> value;  // nullopt: JSON null
};

// A player spec as SQL gives it: a JSON string (the shorthand, '"uci:/usr/games/stockfish"')
// or a flat object; 22023 naming `what` when it is neither or is wrong. Needs SPI.
arena::PlayerSpec player_spec_of_jsonb(Datum value, const char* what);

// Kills the process groups of this backend's UCI engines when it exits without unwinding
// (FATAL, pg_terminate_backend): call before starting any engine.
void kill_engines_when_the_backend_exits();

// A non-NULL int argument (22004 naming it when NULL).
int int_arg(FunctionCallInfo fcinfo, int n, const char* name);

// The pairs of a jsonb object, values as text (objects and arrays as JSON text); 22023
// when `value` is not an object. Needs an SPI connection. `what` names it in messages.
std::vector<Option> read_options(Datum value, const char* what = "options");

// A seed for a run that names none, so two runs do not replay the same games. 48 bits:
// short enough to type back into options.
std::uint64_t fresh_seed();

// The SQL types of the extension's board, move[] and move, read off pgmate.games's
// columns (the extension never looks its own types up by name). Needs SPI.
struct SqlTypes {
  Oid board = InvalidOid, move_array = InvalidOid, move = InvalidOid;
};
SqlTypes sql_types();

// Whether a CALL runs outside a transaction block, so it may commit as it goes (SPI must
// then be connected with SPI_OPT_NONATOMIC).
bool nonatomic_call(FunctionCallInfo fcinfo);

}  // namespace pgmate::pg
