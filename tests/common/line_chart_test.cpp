#include "common/line_chart.h"

#include <cmath>

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

}  // namespace
}  // namespace pgmate
