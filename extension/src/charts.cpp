// pgmate.line_chart: any query's numbers as an SVG line chart (core/common/line_chart.h, the
// one pgmate.training_chart draws), so a benchmark's or a run's figures become a picture in
// one statement.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/line_chart.h"
#include "datum.h"
#include "guard.h"
#include "pg_headers.h"

extern "C" {
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "utils/builtins.h"
}

namespace {

// Enough for any chart a person reads; bounds the memory a call takes.
constexpr std::uint64_t kMaxPoints = 100000;
const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

}  // namespace

using namespace pgmate;

// pgmate.line_chart(title, x_label, y_label, points jsonb, width, height) RETURNS text: points
// is a JSON array of {"series": name, "x": number, "y": number}; a series a line, in the
// order its first point comes, drawn through its points in order of x.
PGMATE_FUNCTION(line_chart) {
  const std::string title = pg::text_arg(fcinfo, 0), x_label = pg::text_arg(fcinfo, 1), y_label = pg::text_arg(fcinfo, 2);
  const Datum points = PG_GETARG_DATUM(3);
  const int width = PG_GETARG_INT32(4), height = PG_GETARG_INT32(5);
  if (width < 200 || width > 4000 || height < 120 || height > 4000)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "line_chart: width must be 200..4000 and height 120..4000");
  std::vector<ChartSeries> series;
  std::map<std::string, std::size_t> index;
  pg::pg_call([] { SPI_connect(); });
  pg::pinned_sql([&] {
    Oid types[1] = {JSONBOID};
    Datum values[1] = {points};
    static const std::string check =
        "SELECT jsonb_typeof($1) = 'array' AND jsonb_array_length($1) <= " + std::to_string(kMaxPoints) +
        " AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements($1) p WHERE jsonb_typeof(p) <> 'object'"
        "   OR jsonb_typeof(p -> 'series') IS DISTINCT FROM 'string' OR jsonb_typeof(p -> 'x') IS DISTINCT FROM 'number'"
        "   OR jsonb_typeof(p -> 'y') IS DISTINCT FROM 'number')";
    const int rc = SPI_execute_with_args(check.c_str(), 1, types, values, nullptr, true, 1);
    if (rc != SPI_OK_SELECT) elog(ERROR, "line_chart: SPI error %s", SPI_result_code_string(rc));
  });
  const bool valid = pg::pg_call([] {
    bool is_null;
    const Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &is_null);
    return !is_null && DatumGetBool(d);
  });
  if (!valid)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE,
                       "line_chart: points must be a JSON array of at most " + std::to_string(kMaxPoints) +
                           " objects {\"series\": text, \"x\": number, \"y\": number}");
  pg::pinned_sql([&] {
    Oid types[1] = {JSONBOID};
    Datum values[1] = {points};
    const int rc = SPI_execute_with_args(
        "SELECT p ->> 'series', (p ->> 'x')::float8, (p ->> 'y')::float8"
        " FROM jsonb_array_elements($1) WITH ORDINALITY AS e(p, n)"
        " ORDER BY min(n) OVER (PARTITION BY p ->> 'series'), (p ->> 'x')::float8, n",
        1, types, values, nullptr, true, 0);
    if (rc != SPI_OK_SELECT) elog(ERROR, "line_chart: SPI error %s", SPI_result_code_string(rc));
    for (std::uint64_t i = 0; i < SPI_processed; ++i) {
      bool is_null;
      HeapTuple row = SPI_tuptable->vals[i];
      TupleDesc desc = SPI_tuptable->tupdesc;
      char* name = TextDatumGetCString(SPI_getbinval(row, desc, 1, &is_null));
      auto [at, added] = index.emplace(name, series.size());
      if (added) series.push_back({name, kColors[series.size() % 8], false, series.size() >= 8, {}});
      pfree(name);
      series[at->second].points.push_back(
          {DatumGetFloat8(SPI_getbinval(row, desc, 2, &is_null)), DatumGetFloat8(SPI_getbinval(row, desc, 3, &is_null))});
    }
  });
  pg::pg_call([] { SPI_finish(); });
  return pg::text_datum(line_chart_svg(title, x_label, y_label, "", series, width, height));
}
