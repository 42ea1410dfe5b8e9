#include "common/line_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace pgmate {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// A label for a tick value: as few digits as the step between ticks needs.
std::string tick_label(double v, double step) {
  const int decimals = step >= 1 ? 0 : std::min(6, int(std::ceil(-std::log10(step))));
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, std::abs(v) < step * 1e-9 ? 0.0 : v);
  return text;
}

// Coordinates beyond this are left out like non-finite ones, so that spans, steps and
// bounds stay finite.
constexpr double kLargest = 1e300;

bool plottable(double x, double y) { return std::abs(x) <= kLargest && std::abs(y) <= kLargest; }

// Ticks lo, lo + step, ... up to hi: `ticks` of them, never more than a dozen.
struct Axis {
  double lo = 0, hi = 1, step = 0.2;
  int ticks = 6;
  double tick(int i) const { return lo + i * step; }
};

// Bounds widened to round ticks (1, 2 or 5 times a power of ten), about five of them.
Axis nice_axis(double lo, double hi) {
  if (!(lo <= hi) || !(std::abs(lo) <= kLargest) || !(std::abs(hi) <= kLargest)) lo = 0, hi = 1;
  // A span the values' own precision cannot divide into distinct ticks (equal values, or
  // two neighbouring large ones) is widened around them.
  const double magnitude = std::max(std::abs(lo), std::abs(hi));
  if (hi - lo < std::max(1e-12, magnitude * 1e-9)) {
    const double pad = std::max(magnitude * 0.1, 1e-3);
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / 5;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power) {
      step = m * power;
      break;
    }
  Axis axis{std::floor(lo / step) * step, std::ceil(hi / step) * step, step, 0};
  // The span is at most five steps widened by one at each end; counting the ticks instead
  // of stepping a double until it passes hi keeps their number bounded whatever rounding does.
  axis.ticks = int(std::clamp(std::round((axis.hi - axis.lo) / step), 0.0, 11.0)) + 1;
  return axis;
}

}  // namespace

std::string line_chart_svg(const std::string& title, const std::string& x_label, const std::string& left_label,
                           const std::string& right_label, const std::vector<ChartSeries>& series, int width,
                           int height) {
  width = std::max(width, 200);
  height = std::max(height, 120);
  constexpr double inf = std::numeric_limits<double>::infinity();
  double x_lo = inf, x_hi = -inf, y_lo[2] = {inf, inf}, y_hi[2] = {-inf, -inf};
  bool has_axis[2] = {false, false};
  for (const ChartSeries& s : series)
    for (const auto& [x, y] : s.points) {
      if (!plottable(x, y)) continue;
      const int a = s.right_axis ? 1 : 0;
      has_axis[a] = true;
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
      y_lo[a] = std::min(y_lo[a], y), y_hi[a] = std::max(y_hi[a], y);
    }
  if (y_lo[0] >= 0 && has_axis[0]) y_lo[0] = 0;
  const Axis xa = nice_axis(x_lo, x_hi);
  const Axis ya[2] = {nice_axis(y_lo[0], y_hi[0]), nice_axis(y_lo[1], y_hi[1])};

  // The legend runs in rows below the x axis's label; the plot takes what is left.
  const double left = 64, right = width - 64.0, top = 40;
  const auto legend_width = [](const ChartSeries& s) { return 34 + 6.5 * double(s.name.size()); };
  int legend_rows = series.empty() ? 0 : 1;
  for (double lx = left; const ChartSeries& s : series) {
    if (lx + legend_width(s) > right && lx > left) ++legend_rows, lx = left;
    lx += legend_width(s);
  }
  const double bottom = std::max(top + 40, height - 44.0 - 14.0 * legend_rows);
  const auto px = [&](double x) { return left + (x - xa.lo) / (xa.hi - xa.lo) * (right - left); };
  const auto py = [&](int a, double y) { return bottom - (y - ya[a].lo) / (ya[a].hi - ya[a].lo) * (bottom - top); };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
                    std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
                    std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + num(width / 2.0) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" + escape(title) +
         "</text>\n";
  // Grid and ticks.
  for (int i = 0; i < xa.ticks; ++i) {
    const double x = xa.tick(i);
    svg += "<line x1=\"" + num(px(x)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(px(x)) + "\" y2=\"" + num(bottom) +
           "\" stroke=\"#eee\"/>\n";
    svg += "<text x=\"" + num(px(x)) + "\" y=\"" + num(bottom + 14) + "\" text-anchor=\"middle\">" +
           tick_label(x, xa.step) + "</text>\n";
  }
  for (int a = 0; a < 2; ++a) {
    if (!has_axis[a]) continue;
    for (int i = 0; i < ya[a].ticks; ++i) {
      const double y = ya[a].tick(i);
      if (a == 0 || !has_axis[0])
        svg += "<line x1=\"" + num(left) + "\" y1=\"" + num(py(a, y)) + "\" x2=\"" + num(right) + "\" y2=\"" +
               num(py(a, y)) + "\" stroke=\"#eee\"/>\n";
      svg += "<text x=\"" + num(a == 0 ? left - 6 : right + 6) + "\" y=\"" + num(py(a, y) + 4) +
             "\" text-anchor=\"" + (a == 0 ? "end" : "start") + "\">" + tick_label(y, ya[a].step) + "</text>\n";
    }
  }
  svg += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(right - left) + "\" height=\"" +
         num(bottom - top) + "\" fill=\"none\" stroke=\"#888\"/>\n";
  svg += "<text x=\"" + num((left + right) / 2) + "\" y=\"" + num(bottom + 30) + "\" text-anchor=\"middle\">" +
         escape(x_label) + "</text>\n";
  if (has_axis[0])
    svg += "<text transform=\"translate(16," + num((top + bottom) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
           escape(left_label) + "</text>\n";
  if (has_axis[1])
    svg += "<text transform=\"translate(" + num(width - 12.0) + "," + num((top + bottom) / 2) +
           ") rotate(90)\" text-anchor=\"middle\">" + escape(right_label) + "</text>\n";
  // The lines.
  for (const ChartSeries& s : series) {
    std::string points;
    for (const auto& [x, y] : s.points) {
      if (!plottable(x, y)) continue;
      if (!points.empty()) points += ' ';
      points += num(px(x)) + "," + num(py(s.right_axis ? 1 : 0, y));
    }
    if (points.empty()) continue;
    svg += "<polyline fill=\"none\" stroke=\"" + escape(s.color) + "\" stroke-width=\"1.5\"" +
           (s.dashed ? " stroke-dasharray=\"5,3\"" : "") + " points=\"" + points + "\"><title>" + escape(s.name) +
           "</title></polyline>\n";
  }
  double lx = left, ly = bottom + 50;
  for (const ChartSeries& s : series) {
    const double w = legend_width(s);
    if (lx + w > right && lx > left) lx = left, ly += 14;
    svg += "<line x1=\"" + num(lx) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" + num(lx + 22) + "\" y2=\"" + num(ly - 4) +
           "\" stroke=\"" + escape(s.color) + "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"5,3\"" : "") +
           "/>\n";
    svg += "<text x=\"" + num(lx + 26) + "\" y=\"" + num(ly) + "\">" + escape(s.name) + "</text>\n";
    lx += w;
  }
  return svg + "</svg>\n";
}

}  // namespace pgmate
