#include <cstring>
#include <new>

#include "chess/fen.h"
#include "common/text.h"
#include "guard.h"

extern "C" {
#include "utils/guc.h"
PG_MODULE_MAGIC;
}

namespace pgmate::pg {

namespace {

// Cut on a character boundary: a message cut inside a UTF-8 character would be refused
// by the client encoding check, hiding the real error.
void copy_message(char* out, size_t size, const char* text) {
  const size_t n = utf8_prefix_length(text, size - 1);
  std::memcpy(out, text, n);
  out[n] = '\0';
}

}  // namespace

// As a function's SET clause does: a GUC nest level of its own, undone at its end (or by
// the transaction's abort on an error).
int pin_search_path_begin() {
  const int nest_level = NewGUCNestLevel();
  (void)set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
                          false);
  return nest_level;
}

void pin_search_path_end(int nest_level) { AtEOXact_GUC(true, nest_level); }

Datum run_guarded(Body body, FunctionCallInfo fcinfo) {
  // Everything needed to report the error is copied into plain locals inside the catch
  // blocks; ereport runs after them, when no C++ object is alive in this frame.
  ErrorData* postgres_error = nullptr;
  int sqlstate = 0;
  char message[1024];
  try {
    return body(fcinfo);
  } catch (const PgError& e) {
    postgres_error = e.data();
  } catch (const SqlError& e) {
    sqlstate = e.sqlstate();
    copy_message(message, sizeof message, e.what());
  } catch (const chess::IllegalMove& e) {
    sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
    copy_message(message, sizeof message, e.what());
  } catch (const chess::ParseError& e) {
    sqlstate = ERRCODE_INVALID_TEXT_REPRESENTATION;
    copy_message(message, sizeof message, e.what());
  } catch (const std::bad_alloc&) {
    sqlstate = ERRCODE_OUT_OF_MEMORY;
    copy_message(message, sizeof message, "out of memory");
  } catch (const std::invalid_argument& e) {
    sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
    copy_message(message, sizeof message, e.what());
  } catch (const std::exception& e) {
    sqlstate = ERRCODE_INTERNAL_ERROR;
    copy_message(message, sizeof message, e.what());
  } catch (...) {
    sqlstate = ERRCODE_INTERNAL_ERROR;
    copy_message(message, sizeof message, "unknown C++ exception");
  }
  if (postgres_error) ReThrowError(postgres_error);
  ereport(ERROR, (errcode(sqlstate), errmsg("%s", message)));
  pg_unreachable();
}

}  // namespace pgmate::pg
