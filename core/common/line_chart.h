// A small line chart as SVG text (pgmate.training_chart): series of (x, y) points against
// one x axis and two y axes (left and right), with ticks, a legend and a title. Points
// with a non-finite coordinate, or one beyond +-1e300, are left out; a series without
// points is left out of the plot but kept in the legend. The text's size is linear in the
// number of points and names whatever the values: each axis has at most a dozen ticks.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pgmate {

struct ChartSeries {
  std::string name;
  std::string color;        // an SVG colour, "#1f77b4"
  bool right_axis = false;  // plotted against the right y axis
  bool dashed = false;
  std::vector<std::pair<double, double>> points;
};

// Starts with "<svg" and ends with "</svg>\n"; names and labels are XML-escaped. Each axis
// spans its series' range (the left axis from 0 when every value is >= 0). width and
// height in pixels, at least 200 x 120.
std::string line_chart_svg(const std::string& title, const std::string& x_label, const std::string& left_label,
                           const std::string& right_label, const std::vector<ChartSeries>& series, int width,
                           int height);

}  // namespace pgmate
