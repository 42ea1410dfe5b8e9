// The one guard around every SQL entry point, and the bridge for calling PostgreSQL
// from C++.
//
// - C++ exceptions never cross into PostgreSQL: PGMATE_FUNCTION runs the body inside
//   try/catch and raises ereport(ERROR) with a real SQLSTATE only after every C++ frame
//   is gone (IllegalMove -> 22023, any other ParseError -> 22P02, bad_alloc -> 53200,
//   SqlError -> its own code).
// - PostgreSQL errors never longjmp over live C++ objects: C++ code calls PostgreSQL
//   through pg_call(), which catches the error with PG_TRY and rethrows it as PgError;
//   the guard re-raises the original error unchanged.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "pg_headers.h"

namespace pgmate::pg {

// A PostgreSQL error caught by pg_call, carried across C++ frames.
class PgError : public std::exception {
 public:
  explicit PgError(ErrorData* data) : data_(data) {}
  const char* what() const noexcept override { return data_->message ? data_->message : "PostgreSQL error"; }
  ErrorData* data() const { return data_; }

 private:
  ErrorData* data_;
};

// An error raised by extension code with its SQLSTATE (ERRCODE_... value).
class SqlError : public std::runtime_error {
 public:
  SqlError(int sqlstate, const std::string& message) : std::runtime_error(message), sqlstate_(sqlstate) {}
  int sqlstate() const { return sqlstate_; }

 private:
  int sqlstate_;
};

// Runs f (which may call PostgreSQL and so ereport) and turns a PostgreSQL error into a
// PgError. f itself must hold no C++ objects with destructors across the calls it makes.
template <class F>
auto pg_call(F&& f) -> decltype(f()) {
  using Result = decltype(f());
  MemoryContext context = CurrentMemoryContext;
  ErrorData* volatile error = nullptr;
  if constexpr (std::is_void_v<Result>) {
    PG_TRY();
    { f(); }
    PG_CATCH();
    {
      MemoryContextSwitchTo(context);
      error = CopyErrorData();
      FlushErrorState();
    }
    PG_END_TRY();
    if (error) throw PgError(error);
  } else {
    Result result{};
    PG_TRY();
    { result = f(); }
    PG_CATCH();
    {
      MemoryContextSwitchTo(context);
      error = CopyErrorData();
      FlushErrorState();
    }
    PG_END_TRY();
    if (error) throw PgError(error);
    return result;
  }
}

// Runs f as pg_call does, with search_path set to pg_catalog, pg_temp while it runs: the
// statements pgmate writes itself (SPI) resolve no name through the caller's search path,
// where a role's own schema could put a function or operator before the built-ins (a
// quote_ident(name), an =(regrole, regrole)). pgmate's own objects are named by schema in
// them. Queries the caller gives (a games query, training data) run outside it, under the
// caller's path, as the queries it types do. f must not commit: a commit ends the setting.
int pin_search_path_begin();
void pin_search_path_end(int nest_level);
template <class F>
auto pinned_sql(F&& f) -> decltype(f()) {
  return pg_call([&] {
    const int nest_level = pin_search_path_begin();
    if constexpr (std::is_void_v<decltype(f())>) {
      PG_TRY();
      { f(); }
      PG_FINALLY();
      { pin_search_path_end(nest_level); }
      PG_END_TRY();
    } else {
      decltype(f()) result{};
      PG_TRY();
      { result = f(); }
      PG_FINALLY();
      { pin_search_path_end(nest_level); }
      PG_END_TRY();
      return result;
    }
  });
}

// Lets query cancel and statement_timeout interrupt long C++ loops.
inline void check_for_interrupts() {
  pg_call([] { CHECK_FOR_INTERRUPTS(); });
}

using Body = Datum (*)(FunctionCallInfo);
Datum run_guarded(Body body, FunctionCallInfo fcinfo);

}  // namespace pgmate::pg

// Declares a V1 SQL function whose C++ body runs under the guard:
//   PGMATE_FUNCTION(board_in) { ... return ...; }
#define PGMATE_FUNCTION(name)                                                     \
  static Datum name##_body(FunctionCallInfo fcinfo);                              \
  extern "C" {                                                                    \
  PG_FUNCTION_INFO_V1(name);                                                      \
  Datum name(PG_FUNCTION_ARGS) { return pgmate::pg::run_guarded(name##_body, fcinfo); } \
  }                                                                               \
  static Datum name##_body(FunctionCallInfo fcinfo)
