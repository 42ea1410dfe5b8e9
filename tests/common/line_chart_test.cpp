#include "common/line_chart.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace pgmate {
namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(LineChart, OnePolylinePerSeriesWithPointsAndEveryNameInTheLegend) {
  std::vector<ChartSeries> series = {
      {"policy loss", "#123456", false, false, {{0, 3.2}, {50, 2.5}, {100, 2.0}}},
      {"held-out top-1", "#654321", true, true, {{0, 0.05}, {100, 0.31}}},
      {"empty", "#000000", false, false, {}},
  };
  const std::string svg = line_chart_svg("run <1> & co", "step", "loss", "accuracy", series, 640, 320);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(count(svg, "<polyline"), 2);
  EXPECT_NE(svg.find("run &lt;1&gt; &amp; co"), std::string::npos);
  EXPECT_EQ(svg.find("run <1>"), std::string::npos);
  for (const char* name : {"policy loss", "held-out top-1", "empty"}) EXPECT_NE(svg.find(name), std::string::npos);
  EXPECT_EQ(count(svg, "stroke-dasharray"), 2);  // the dashed series' line and its legend entry
  EXPECT_NE(svg.find("#654321"), std::string::npos);
}

TEST(LineChart, PointsStayInsideThePlotAndNonFiniteOnesAreLeftOut) {
  std::vector<ChartSeries> series = {{"a", "red", false, false, {{0, 1}, {1, NAN}, {2, INFINITY}, {3, 7}}}};
  const std::string svg = line_chart_svg("t", "x", "y", "", series, 400, 200);
  const std::size_t at = svg.find("points=\"");
  ASSERT_NE(at, std::string::npos);
  const std::string points = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  EXPECT_EQ(count(points, ","), 2);  // two finite points
  double x = 0, y = 0;
  for (std::size_t p = 0; p < points.size();) {
    ASSERT_EQ(std::sscanf(points.c_str() + p, "%lf,%lf", &x, &y), 2);
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 400);
    EXPECT_GE(y, 0);
    EXPECT_LE(y, 200);
    p = points.find(' ', p);
    if (p == std::string::npos) break;
    ++p;
  }
}

TEST(LineChart, NoPointsAtAllStillMakesAValidImage) {
  const std::string svg = line_chart_svg("nothing yet", "step", "loss", "accuracy", {}, 300, 150);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 0);
}

TEST(LineChart, EveryAxisHasAFewTicksWhateverTheValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<std::pair<double, double>>> cases = {
      {{1e17, 1}, {1e17 + 16, 2}},                        // neighbouring large doubles
      {{1000000, 1}, {1000000.0000000002, 2}},             // a span far below the values' precision
      {{1, 1e17}, {2, 1e17 + 16}},                         // the same on the y axis
      {{1, 1000000}, {2, 1000000.0000000002}},
      {{5, 5}},                                            // one point
      {{3, 7}, {3, 7}, {3, 7}},                            // equal values
      {{0, 0}, {0, 0}},
      {{nan, 1}, {inf, 2}, {-inf, nan}},                   // nothing finite
      {{1, 1}, {2, inf}, {nan, 3}},
      {{-1e300, -1e300}, {1e300, 1e300}},                  // the widest span kept
      {{std::numeric_limits<double>::max(), 1}, {-std::numeric_limits<double>::max(), 2}},
      {{std::numeric_limits<double>::denorm_min(), 0}, {2 * std::numeric_limits<double>::denorm_min(), 0}},
  };
  for (const auto& points : cases) {
    std::vector<ChartSeries> series = {{"left", "red", false, false, points}, {"right", "blue", true, false, points}};
    const std::string svg = line_chart_svg("t", "x", "y", "z", series, 720, 360);
    SCOPED_TRACE(svg.substr(0, 2000));
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
    EXPECT_LT(svg.size(), 8000u);
    // A grid line per x tick and per left-axis tick: at least two each, at most a dozen.
    EXPECT_GE(count(svg, "stroke=\"#eee\""), 4);
    EXPECT_LE(count(svg, "stroke=\"#eee\""), 24);
    EXPECT_LE(count(svg, "text-anchor=\"end\""), 12);    // the left axis's tick labels
    EXPECT_LE(count(svg, "text-anchor=\"start\""), 12);  // the right axis's
  }
}

TEST(LineChart, TwoCloseLargeStepsGiveDistinctTicksAroundThem) {
  const std::string svg =
      line_chart_svg("t", "step", "loss", "", {{"a", "red", false, false, {{1e17, 1}, {1e17 + 16, 2}}}}, 720, 360);
  EXPECT_EQ(count(svg, "<polyline"), 1);
  // The ticks are distinct round numbers around 1e17, so some label reads 100000000000000000.
  EXPECT_NE(svg.find(">100000000000000000<"), std::string::npos);
}

}  // namespace
}  // namespace pgmate
