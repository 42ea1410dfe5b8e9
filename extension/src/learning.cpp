// pgmate.learning_chart: a learning run's iterations as two SVG charts, one above the
// other: training losses, KL and held-out top-1; arena Elo against the best network with
// its 95% interval, and the sanity scores against random and pure MCTS. The loop itself is
// core/learning/loop.h, run by CALL pgmate.learn (learn.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "common/line_chart.h"
#include "common/text.h"
#include "datum.h"
#include "guard.h"

extern "C" {
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
}

using namespace pgmate;

namespace {

// Puts a chart's <svg> element at vertical offset y inside the outer one.
std::string placed(std::string svg, int y) {
  const std::string::size_type at = svg.find("<svg");
  if (at != std::string::npos) svg.insert(at + 4, " y=\"" + std::to_string(y) + "\"");
  return svg;
}

}  // namespace

// pgmate.learning_chart(run text, width int, height int) RETURNS text: NULL for a run
// without finished iterations; height is each chart's.
PGMATE_FUNCTION(learning_chart) {
  const std::string run = pg::text_arg(fcinfo, 0);
  const int width = PG_GETARG_INT32(1), height = PG_GETARG_INT32(2);
  if (width < 200 || width > 4000 || height < 120 || height > 4000)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "learning_chart: width must be 200..4000 and height 120..4000");
  pg::pg_call([] { SPI_connect(); });
  Oid types[1] = {TEXTOID};
  Datum values[1] = {pg::text_datum(run)};
  pg::pinned_sql([&] {
    if (SPI_execute_with_args("SELECT 1 FROM pgmate.learning_runs WHERE id = pgmate.learning_run_id($1)", 1, types, values, nullptr, true, 1) !=
        SPI_OK_SELECT)
      elog(ERROR, "learning_chart: the run lookup failed");
  });
  if (SPI_processed == 0)
    throw pg::SqlError(ERRCODE_INVALID_PARAMETER_VALUE, "learning_chart: no learning run named " + quote_input(run, 60));
  pg::pinned_sql([&] {
    if (SPI_execute_with_args(
            "SELECT i.iteration::float8, i.policy_loss, i.value_loss, i.kl, i.holdout_top1,"
            "       i.promotion_elo, i.promotion_elo_lower, i.promotion_elo_upper,"
            "       (i.arena->'random'->>'score')::float8, (i.arena->'mcts'->>'score')::float8"
            " FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id"
            " WHERE r.id = pgmate.learning_run_id($1) ORDER BY i.iteration",
            1, types, values, nullptr, true, 0) != SPI_OK_SELECT)
      elog(ERROR, "learning_chart: the iteration query failed");
  });
  std::vector<ChartSeries> training = {
      {"policy loss", "#1f77b4", false, false, {}},
      {"value loss", "#ff7f0e", false, false, {}},
      {"KL to the start network", "#9467bd", false, true, {}},
      {"held-out top-1", "#2ca02c", true, false, {}},
  };
  std::vector<ChartSeries> arena = {
      {"Elo against the best", "#d62728", false, false, {}},
      {"95% interval, lower", "#d62728", false, true, {}},
      {"95% interval, upper", "#d62728", false, true, {}},
      {"score against random", "#7f7f7f", true, false, {}},
      {"score against pure MCTS", "#17becf", true, false, {}},
  };
  const std::uint64_t n = SPI_processed;
  pg::pg_call([&] {
    for (std::uint64_t i = 0; i < n; ++i) {
      CHECK_FOR_INTERRUPTS();
      HeapTuple row = SPI_tuptable->vals[i];
      TupleDesc desc = SPI_tuptable->tupdesc;
      bool is_null = false;
      const double x = DatumGetFloat8(SPI_getbinval(row, desc, 1, &is_null));
      const auto add = [&](ChartSeries& series, int column) {
        const Datum d = SPI_getbinval(row, desc, column, &is_null);
        if (!is_null) series.points.push_back({x, DatumGetFloat8(d)});
      };
      for (int k = 0; k < 4; ++k) add(training[std::size_t(k)], 2 + k);
      for (int k = 0; k < 5; ++k) add(arena[std::size_t(k)], 6 + k);
    }
  });
  pg::pg_call([] { SPI_finish(); });
  if (n == 0) PG_RETURN_NULL();
  const std::string svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
      std::to_string(2 * height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(2 * height) +
      "\">\n" +
      placed(line_chart_svg("learning run " + run + ": training", "iteration", "loss", "top-1", training, width, height),
             0) +
      placed(line_chart_svg("learning run " + run + ": arena", "iteration", "Elo", "score", arena, width, height),
             height) +
      "</svg>\n";
  return pg::text_datum(svg);
}
