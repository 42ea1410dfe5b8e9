#include <cmath>
#include <memory>
#include <cstring>
#include <vector>

#include "chess/fen.h"
#include "chess/notation.h"
#include "common/text.h"
#include "datum.h"


namespace pgmate::pg {

chess::Board board_from_datum(Datum d) {
  // The board unpacked last is kept: a scan over stored games unpacks nearly the same start
  // position for every row, and unpacking checks the position and computes its key.
  static chess::PackedBoard last_packed;
  static chess::Board last_board;
  static bool have_last = false;
  chess::PackedBoard packed;
  std::memcpy(packed.data(), DatumGetPointer(d), kBoardSize);
  if (have_last && packed == last_packed) return last_board;
  chess::Board board = chess::unpack(packed);  // throws for a bad packing: nothing kept
  last_packed = packed;
  last_board = board;
  have_last = true;
  return board;
}

Datum board_to_datum(const chess::Board& b) {
  const chess::PackedBoard packed = chess::pack(b);
  void* out = pg_call([] { return palloc(kBoardSize); });
  std::memcpy(out, packed.data(), kBoardSize);
  return PointerGetDatum(out);
}

chess::Move move_from_datum(Datum d) { return chess::Move(std::uint16_t(DatumGetUInt16(d))); }

Datum move_to_datum(chess::Move m) { return UInt16GetDatum(chess::board_free(m).bits()); }

std::string text_arg(FunctionCallInfo fcinfo, int n) {
  text* t = pg_call([&] { return PG_GETARG_TEXT_PP(n); });
  return std::string(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

Datum text_datum(std::string_view s) {
  return pg_call([&] { return PointerGetDatum(cstring_to_text_with_len(s.data(), int(s.size()))); });
}

char* cstring_copy(std::string_view s) {
  char* out = pg_call([&] { return static_cast<char*>(palloc(s.size() + 1)); });
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

chess::Square square_arg(FunctionCallInfo fcinfo, int n) {
  const std::string text = text_arg(fcinfo, n);
  const chess::Square s = chess::parse_square(text);
  if (s == chess::kNoSquare)
    throw SqlError(ERRCODE_INVALID_TEXT_REPRESENTATION,
                   "invalid square " + quote_input(text, 40) + ": expected a file a-h and a rank 1-8, like \"e4\"");
  return s;
}

std::string piece_text(chess::Piece p) { return std::string(1, chess::piece_char(p)); }

std::vector<Datum> array_elements(FunctionCallInfo fcinfo, int n, const char* what) {
  ArrayType* array = pg_call([&] { return PG_GETARG_ARRAYTYPE_P(n); });
  if (ARR_NDIM(array) > 1) throw SqlError(ERRCODE_ARRAY_SUBSCRIPT_ERROR, std::string(what) + " must be a one-dimensional array");
  Datum* values = nullptr;
  bool* nulls = nullptr;
  int count = 0;
  pg_call([&] {
    int16 length;
    bool by_value;
    char align;
    get_typlenbyvalalign(ARR_ELEMTYPE(array), &length, &by_value, &align);
    deconstruct_array(array, ARR_ELEMTYPE(array), length, by_value, align, &values, &nulls, &count);
  });
  std::vector<Datum> out(values, values + count);
  for (int i = 0; i < count; ++i)
    if (nulls[i]) throw SqlError(ERRCODE_NULL_VALUE_NOT_ALLOWED, std::string(what) + " element " + std::to_string(i + 1) + " is NULL");
  return out;
}

MoveValues move_values(Datum datum) {
  ArrayType* array = pg_call([&] { return DatumGetArrayTypeP(datum); });
  const int count = pg_call([&] { return ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)); });
  MoveValues values;
  values.dimensions = ARR_NDIM(array);
  int present = count;
  if (const bits8* bitmap = ARR_NULLBITMAP(array))
    for (int i = 0; i < count; ++i)
      if (!((bitmap[i / 8] >> (i % 8)) & 1)) {
        if (values.first_null < 0) values.first_null = i;
        --present;
      }
  values.present = {reinterpret_cast<const std::uint16_t*>(ARR_DATA_PTR(array)), std::size_t(present)};
  return values;
}

std::span<const std::uint16_t> move_bits_arg(FunctionCallInfo fcinfo, int n, const char* what) {
  const MoveValues values = move_values_arg(fcinfo, n);
  if (values.dimensions > 1) throw SqlError(ERRCODE_ARRAY_SUBSCRIPT_ERROR, std::string(what) + " must be a one-dimensional array");
  if (values.first_null >= 0)
    throw SqlError(ERRCODE_NULL_VALUE_NOT_ALLOWED, std::string(what) + " element " + std::to_string(values.first_null + 1) + " is NULL");
  return values.present;
}

Datum make_array(const std::vector<Datum>& elements, Oid element_type) {
  return pg_call([&] {
    int16 length;
    bool by_value;
    char align;
    get_typlenbyvalalign(element_type, &length, &by_value, &align);
    return PointerGetDatum(construct_array(const_cast<Datum*>(elements.data()), int(elements.size()), element_type,
                                           length, by_value, align));
  });
}

Datum clocks_to_datum(const std::vector<double>& seconds) {
  return pg_call([&] {
    std::vector<Datum> values(seconds.size());
    std::vector<bool> nulls(seconds.size());
    for (std::size_t i = 0; i < seconds.size(); ++i) {
      nulls[i] = seconds[i] < 0;
      if (nulls[i]) continue;
      Interval* v = static_cast<Interval*>(palloc0(sizeof(Interval)));
      v->time = static_cast<int64>(std::llround(seconds[i] * 1e6));
      values[i] = PointerGetDatum(v);
    }
    int dims[1] = {int(seconds.size())};
    int lbs[1] = {1};
    std::unique_ptr<bool[]> null_flags(new bool[seconds.size() ? seconds.size() : 1]);
    for (std::size_t i = 0; i < seconds.size(); ++i) null_flags[i] = nulls[i];
    return PointerGetDatum(construct_md_array(values.data(), null_flags.get(), 1, dims, lbs, INTERVALOID,
                                              sizeof(Interval), false, TYPALIGN_DOUBLE));
  });
}

Oid return_element_type(FunctionCallInfo fcinfo) {
  return pg_call([&] { return get_element_type(get_fn_expr_rettype(fcinfo->flinfo)); });
}

Oid column_element_type(TupleDesc desc, int column) {
  return pg_call([&] { return get_element_type(TupleDescAttr(desc, column)->atttypid); });
}

}  // namespace pgmate::pg
