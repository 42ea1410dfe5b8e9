// pgmate report: one self-contained HTML page about a learning run: its settings and state,
// the charts of pgmate.learning_chart (inline SVG) and the table of pgmate.learning_log.
// No scripts, no outside files: it opens anywhere, and mails as one file.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "args.h"
#include "commands.h"
#include "db.h"

namespace pgmate::cli {

namespace {

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
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

const char* const kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}"
    "th{background:#f3f3f3}td.text{text-align:left}"
    "td.promoted{background:#dff0d8}td.vetoed{background:#f2dede}";

}  // namespace

int report_command(const std::vector<std::string>& args) {
  std::string conninfo, run, out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") conninfo = value();
    else if (a == "--run") run = value();
    else if (a == "--out") out = value();
    else throw UsageError("unknown argument \"" + a + "\"");
  }
  if (run.empty()) throw UsageError("--run NAME is required");
  if (out.empty()) throw UsageError("--out FILE.html is required");

  auto conn = connect_db(conninfo);
  require_table(*conn, "pgmate.learning_runs");
  std::string html;
  with_db_errors([&] {
    pqxx::work tx(*conn);
    const pqxx::result state = tx.exec_params(
        "SELECT id, settings::text, start_network, best_network, current_network, iterations, veto_level,"
        "       pretrain_mix, lr, (SELECT st.status FROM pgmate.learning_status st"
        "                          WHERE st.run = r.name AND st.owner = r.owner), created_at::text, updated_at::text"
        " FROM pgmate.learning_runs r WHERE id = pgmate.learning_run_id($1)",
        run);
    if (state.empty()) throw UsageError("no learning run named \"" + run + "\" in pgmate.learning_runs");
    const pqxx::result chart = tx.exec_params("SELECT pgmate.learning_chart($1, 900, 360)", run);
    const pqxx::result log = tx.exec_params("SELECT l.* FROM pgmate.learning_log l JOIN pgmate.learning_runs r ON r.name = l.run AND r.owner = l.owner"
        " WHERE r.id = pgmate.learning_run_id($1) ORDER BY iteration", run);

    html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>pgmate learning run " +
           html_escape(run) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
    html += "<h1>Learning run " + html_escape(run) + "</h1>\n<table id=\"run\">\n";
    const char* labels[] = {"id",      "settings",   "start network", "best network", "current network", "iterations",
                            "veto level", "pretraining share", "learning rate", "status", "created", "updated"};
    for (std::size_t c = 0; c < state.columns(); ++c)
      html += "<tr><th>" + std::string(labels[c]) + "</th><td class=\"text\">" +
              html_escape(state[0][int(c)].is_null() ? "" : state[0][int(c)].as<std::string>()) + "</td></tr>\n";
    html += "</table>\n<h2>Charts</h2>\n";
    if (!chart.empty() && !chart[0][0].is_null())
      html += "<div id=\"charts\">\n" + chart[0][0].as<std::string>() + "</div>\n";  // SVG, escaped by its writer
    else
      html += "<p>No finished iteration yet.</p>\n";
    html += "<h2>Iterations</h2>\n<table id=\"iterations\">\n<tr>";
    for (std::size_t c = 1; c < log.columns(); ++c) html += "<th>" + html_escape(log.column_name(pqxx::row::size_type(c))) + "</th>";
    html += "</tr>\n";
    for (const auto& row : log) {
      html += "<tr>";
      for (std::size_t c = 1; c < log.columns(); ++c) {
        const pqxx::field f = row[int(c)];
        const std::string v = f.is_null() ? "" : f.as<std::string>();
        const std::string name = log.column_name(pqxx::row::size_type(c));
        std::string cls;
        if (name == "decision") cls = " class=\"" + html_escape(v) + "\"";
        else if (name == "reason") cls = " class=\"text\"";
        html += "<td" + cls + ">" + html_escape(v) + "</td>";
      }
      html += "</tr>\n";
    }
    html += "</table>\n</body>\n</html>\n";
  });
  std::ofstream file(out, std::ios::binary);
  if (!file) throw std::runtime_error("cannot write " + out);
  file << html;
  file.close();
  if (!file) throw std::runtime_error("cannot write " + out);
  std::cout << "wrote " << out << " (" << html.size() << " bytes)" << std::endl;
  return 0;
}

}  // namespace pgmate::cli
