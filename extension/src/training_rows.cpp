#include "training_rows.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "chess/fen.h"
#include "chess/movegen.h"
#include "chess/notation.h"
#include "common/text.h"
#include "datum.h"

extern "C" {
#include "utils/lsyscache.h"
}

namespace pgmate::pg {

int train_max_rows = 10000000;

namespace {

constexpr long kChunk = 1024;

double number(Datum d, Oid type) {
  switch (type) {
    case FLOAT4OID: return DatumGetFloat4(d);
    case FLOAT8OID: return DatumGetFloat8(d);
    case INT2OID: return DatumGetInt16(d);
    case INT4OID: return DatumGetInt32(d);
    default: return double(DatumGetInt64(d));
  }
}

std::vector<double> numbers(Datum array) {
  std::vector<double> out;
  pg_call([&] {
    ArrayType* a = DatumGetArrayTypeP(array);
    const Oid element = ARR_ELEMTYPE(a);
    Datum* values;
    bool* nulls;
    int n;
    deconstruct_array(a, element, element == FLOAT4OID ? 4 : 8, element == FLOAT4OID ? true : FLOAT8PASSBYVAL,
                      element == FLOAT4OID ? 'i' : 'd', &values, &nulls, &n);
    for (int i = 0; i < n; ++i) out.push_back(nulls[i] ? NAN : number(values[i], element));
  });
  return out;
}

// The array's non-NULL elements.
std::vector<Datum> datums(Datum array, int element_length, char align, bool by_value) {
  std::vector<Datum> out;
  pg_call([&] {
    ArrayType* a = DatumGetArrayTypeP(array);
    Datum* values;
    bool* nulls;
    int n;
    deconstruct_array(a, ARR_ELEMTYPE(a), element_length, by_value, align, &values, &nulls, &n);
    for (int i = 0; i < n; ++i)
      if (!nulls[i]) out.push_back(values[i]);
  });
  return out;
}

}  // namespace

TrainingRows::TrainingRows(const std::string& query, bool need_value, std::string what)
    : what_(std::move(what)), need_value_(need_value), types_(sql_types()) {
  portal_ = pg_call([&] {
    SPIPlanPtr plan = SPI_prepare(query.c_str(), 0, nullptr);
    if (!plan)
      ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR), errmsg("%s: the query cannot be prepared: %s", what_.c_str(),
                                                             SPI_result_code_string(SPI_result))));
    if (!SPI_is_cursor_plan(plan))
      ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE), errmsg("%s must be a query that returns rows", what_.c_str())));
    return SPI_cursor_open(nullptr, plan, nullptr, nullptr, true);
  });
  fetch();  // the columns are checked before any row is used
}

TrainingRows::~TrainingRows() {
  // Not after an error: the transaction's end closes the cursor then.
  if (portal_ && !std::uncaught_exceptions()) {
    try {
      close();
    } catch (...) {
    }
  }
}

void TrainingRows::close() {
  if (!portal_) return;
  Portal portal = std::exchange(portal_, nullptr);
  SPITupleTable* table = std::exchange(table_, nullptr);
  pg_call([&] {
    if (table) SPI_freetuptable(table);
    SPI_cursor_close(portal);
  });
}

void TrainingRows::fetch() {
  check_for_interrupts();
  pg_call([&] {
    if (table_) SPI_freetuptable(table_);
    SPI_cursor_fetch(portal_, true, kChunk);
  });
  table_ = SPI_tuptable;
  in_table_ = SPI_processed;
  next_in_table_ = 0;
  if (!columns_checked_) {
    check_columns(table_->tupdesc);
    columns_checked_ = true;
  }
  if (in_table_ == 0) done_ = true;
}

void TrainingRows::check_columns(TupleDesc desc) {
  Columns& c = c_;
  const Oid board_array = pg_call([&] { return get_array_type(types_.board); });
  struct Role {
    const char* name;
    int* column;
    std::vector<Oid> accepted;
    const char* type;
  };
  const Role roles[] = {
      {"board", &c.board, {types_.board}, "board"},
      {"history", &c.history, {board_array}, "board[]"},
      {"repetitions", &c.repetitions, {INT2OID, INT4OID, INT8OID}, "an integer"},
      {"played", &c.played, {types_.move}, "move"},
      {"moves", &c.moves, {types_.move_array}, "move[]"},
      {"policy", &c.policy, {FLOAT4ARRAYOID, FLOAT8ARRAYOID}, "real[]"},
      {"z", &c.z, {FLOAT4OID, FLOAT8OID, INT2OID, INT4OID, INT8OID}, "a number"},
      {"wdl", &c.wdl, {FLOAT4ARRAYOID, FLOAT8ARRAYOID}, "real[]"},
      {"weight", &c.weight, {FLOAT4OID, FLOAT8OID}, "real"},
  };
  for (int i = 0; i < desc->natts; ++i) {
    const Form_pg_attribute a = TupleDescAttr(desc, i);
    if (a->attisdropped) continue;
    for (const Role& r : roles) {
      if (std::string_view(NameStr(a->attname)) != r.name) continue;
      if (std::find(r.accepted.begin(), r.accepted.end(), a->atttypid) == r.accepted.end())
        throw SqlError(ERRCODE_DATATYPE_MISMATCH,
                       what_ + ": column " + r.name + " must be " + r.type + ", not " +
                           pg_call([&] { return std::string(format_type_be(a->atttypid)); }));
      *r.column = i + 1;
    }
  }
  const auto missing = [&](const std::string& column) {
    throw SqlError(ERRCODE_DATATYPE_MISMATCH, what_ + ": the query has no column " + column);
  };
  if (!c.board) missing("board (the position)");
  if (!c.played && !(c.moves && c.policy))
    missing(c.moves ? "policy (the target over moves)" : "played (the target move), nor moves and policy");
  if (need_value_ && !c.z && !c.wdl) missing("z (the result from the side to move) nor wdl");
}

void TrainingRows::bad_row(const std::string& why) const {
  throw SqlError(ERRCODE_INVALID_PARAMETER_VALUE, what_ + ": row " + std::to_string(row_) + ": " + why);
}

bool TrainingRows::next(TrainingRow& out) {
  if (!done_ && next_in_table_ == in_table_) fetch();
  if (done_) return false;
  HeapTuple tuple = table_->vals[next_in_table_++];
  TupleDesc desc = table_->tupdesc;
  ++row_;
  const Columns& c = c_;
  const auto get = [&](int column, bool& is_null) {
    return pg_call([&] { return SPI_getbinval(tuple, desc, column, &is_null); });
  };
  out = TrainingRow{};
  worker::protocol::TrainSample& s = out.sample;
  bool is_null = false;
  const Datum board = get(c.board, is_null);
  if (is_null) bad_row("board is NULL");
  s.history.push_back(board_from_datum(board));
  if (c.history) {
    const Datum h = get(c.history, is_null);
    if (!is_null)
      for (Datum b : datums(h, kBoardSize, 'c', false))
        if (s.history.size() < std::size_t(worker::protocol::kMaxHistory)) s.history.push_back(board_from_datum(b));
  }
  if (c.repetitions) {
    const Datum r = get(c.repetitions, is_null);
    if (!is_null) s.repetitions = std::uint8_t(std::clamp(int(number(r, SPI_gettypeid(desc, c.repetitions))), 0, 2));
  }
  std::vector<chess::Move> moves;
  std::vector<double> probs;
  if (c.played) {
    const Datum m = get(c.played, is_null);
    if (!is_null) {
      moves.push_back(move_from_datum(m));
      probs.push_back(1);
    }
  }
  if (moves.empty() && c.moves && c.policy) {
    bool moves_null = false, policy_null = false;
    const Datum ms = get(c.moves, moves_null);
    const Datum ps = get(c.policy, policy_null);
    if (!moves_null && !policy_null) {
      for (Datum d : datums(ms, 2, 's', true)) moves.push_back(move_from_datum(d));
      probs = numbers(ps);
      if (probs.size() != moves.size())
        bad_row("policy has " + std::to_string(probs.size()) + " values for " + std::to_string(moves.size()) +
                " moves");
    }
  }
  if (moves.empty()) bad_row("no target move (played, or moves and policy, are NULL)");
  // Each target must be a legal move of the position (taken with the board's own kind bits).
  chess::MoveList legal;
  chess::legal_moves(s.history.front(), legal);
  std::vector<bool> given(std::size_t(legal.size), false);
  double total = 0;
  for (std::size_t k = 0; k < moves.size(); ++k) {
    const chess::Move want = chess::board_free(moves[k]);
    const chess::Move* at = std::find_if(legal.moves, legal.moves + legal.size,
                                         [&](chess::Move m) { return chess::board_free(m) == want; });
    if (at == legal.moves + legal.size)
      bad_row("the target move " + chess::to_uci(want) + " is not legal in " + chess::to_fen(s.history.front()));
    if (given[std::size_t(at - legal.moves)]) bad_row("the target move " + chess::to_uci(want) + " is given twice");
    given[std::size_t(at - legal.moves)] = true;
    if (!(probs[k] >= 0) || !std::isfinite(probs[k]))
      bad_row("the policy value for " + chess::to_uci(want) + " must be a number >= 0");
    if (probs[k] > 0) {
      s.moves.push_back(*at);
      s.policy.push_back(float(probs[k]));
      total += probs[k];
    }
  }
  if (!(total > 0)) bad_row("the policy target sums to 0");
  if (s.moves.size() > worker::protocol::kMaxMovesPerPosition) bad_row("more target moves than legal moves");
  if (c.wdl) {
    const Datum w = get(c.wdl, is_null);
    if (!is_null) {
      const std::vector<double> v = numbers(w);
      if (v.size() != 3) bad_row("wdl must have 3 values (win, draw, loss)");
      for (double x : v)
        if (!(x >= 0) || !std::isfinite(x)) bad_row("wdl values must be numbers >= 0");
      if (!(v[0] + v[1] + v[2] > 0)) bad_row("wdl sums to 0");
      s.wdl[0] = float(v[0]), s.wdl[1] = float(v[1]), s.wdl[2] = float(v[2]);
      out.has_value = true;
    }
  } else if (c.z) {
    const Datum z = get(c.z, is_null);
    if (!is_null) {
      const double zv = number(z, SPI_gettypeid(desc, c.z));
      if (!std::isfinite(zv)) bad_row("z must be a finite number");
      s.wdl[0] = zv > 0.5 ? 1.0f : 0.0f;
      s.wdl[1] = zv >= -0.5 && zv <= 0.5 ? 1.0f : 0.0f;
      s.wdl[2] = zv < -0.5 ? 1.0f : 0.0f;
      out.has_value = true;
    }
  }
  if (need_value_ && !out.has_value) bad_row(c.wdl ? "wdl is NULL" : "z is NULL");
  if (c.weight) {
    const Datum w = get(c.weight, is_null);
    if (!is_null) s.weight = float(number(w, SPI_gettypeid(desc, c.weight)));
    if (!(s.weight >= 0) || !std::isfinite(s.weight)) bad_row("weight must be a number >= 0");
  }
  // The encoder checks the values as the worker gets them, as real: 1e300 is infinite there,
  // 1e-320 is 0.
  worker::protocol::Writer w;
  try {
    worker::protocol::encode_train_sample(w, s);
  } catch (const worker::protocol::ProtocolError& e) {
    constexpr std::string_view kPrefix = "training sample: ";
    const std::string_view why = e.what();
    bad_row(std::string(why.substr(why.starts_with(kPrefix) ? kPrefix.size() : 0)));
  }
  out.encoded = std::move(w.bytes());
  return true;
}

}  // namespace pgmate::pg
