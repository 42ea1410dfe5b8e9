// pgmate learn: runs iterations of a learning run through CALL pgmate.learn, one iteration
// per call, so that the loop, its rows and its decisions are the extension's one
// implementation (core/learning/loop.h in the extension) whoever drives it. The server's NOTICEs are the progress;
// after each iteration its row of pgmate.learning_log is printed. Ctrl-C or a killed client
// ends the backend's work at its next check (client_connection_check_interval): what was
// in progress resumes with the same command.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/errorhandler>
#include <pqxx/pqxx>

#include "args.h"
#include "commands.h"
#include "common/json.h"
#include "db.h"

namespace pgmate::cli {

namespace {

struct Options {
  std::string conninfo, run;
  int iterations = 1;
  // --iterations N: until the run has N finished iterations, so the same command run again
  // after a crash finishes the job (as pgmate selfplay --games and pgmate arena --games do);
  // --more N: N more, whatever the run has.
  bool more = false;
  std::string network;  // digits, or empty
  std::vector<std::pair<std::string, std::string>> options;  // --option KEY=VALUE
};

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  int counts = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--db") {
      o.conninfo = value();
    } else if (a == "--run") {
      o.run = value();
      if (o.run.empty()) throw UsageError("--run needs a name");
    } else if (a == "--iterations" || a == "--more") {
      o.iterations = parse_count(value(), a.c_str(), 0, 1000000);
      o.more = a == "--more";
      ++counts;
    } else if (a == "--network") {
      o.network = value();
      if (!std::regex_match(o.network, std::regex("[1-9][0-9]{0,17}")))
        throw UsageError("--network needs a network id (a positive number), not \"" + o.network + "\"");
    } else if (a == "--option") {
      const std::string& kv = value();
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--option needs KEY=VALUE, not \"" + kv + "\"");
      o.options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else {
      throw UsageError("unknown argument \"" + a + "\"");
    }
  }
  if (o.run.empty()) throw UsageError("--run NAME is required");
  if (counts == 0) throw UsageError("--iterations N (the run's total) or --more N is required");
  if (counts > 1) throw UsageError("give one of --iterations and --more, once");
  return o;
}

// Prints the server's notices (the loop's progress) as they arrive.
class NoticePrinter final : public pqxx::errorhandler {
 public:
  explicit NoticePrinter(pqxx::connection_base& conn) : pqxx::errorhandler(conn) {}
  bool operator()(const char message[]) noexcept override {
    std::string text(message);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const std::string notice = "NOTICE:  ";  // warnings keep their prefix
    if (text.rfind(notice, 0) == 0) text.erase(0, notice.size());
    std::cout << text << std::endl;
    return false;
  }
};

// The options as the procedure's jsonb: each value typed by the option's kind
// (pgmate.learning_options), so that "--option games=32" is a number and
// "--option search=gumbel" a string. Unknown names are left to the server's message.
std::string options_json(pqxx::connection& conn, const Options& o) {
  std::map<std::string, std::string> kinds;
  with_db_errors([&] {
    pqxx::nontransaction tx(conn);
    for (const auto& row : tx.exec("SELECT name, kind FROM pgmate.learning_options"))
      kinds[row[0].as<std::string>()] = row[1].as<std::string>();
  });
  std::string json = "{";
  auto add = [&](const std::string& key, const std::string& value) {
    const auto kind = kinds.find(key);
    const bool numeric = kind != kinds.end() && kind->second != "text";
    const bool integer = kind != kinds.end() && kind->second == "int";
    if (integer && !std::regex_match(value, std::regex("-?[0-9]+")))
      throw UsageError("--option " + key + " needs a whole number, not \"" + value + "\"");
    if (numeric && !std::regex_match(value, std::regex("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?")))
      throw UsageError("--option " + key + " needs a number, not \"" + value + "\"");
    if (json.size() > 1) json += ", ";
    json += json_string(key) + ": " + (numeric ? value : json_string(value));
  };
  if (!o.network.empty()) add("network", o.network);
  for (const auto& [key, value] : o.options) add(key, value);
  return json + "}";
}

}  // namespace

int learn_command(const std::vector<std::string>& args) {
  const Options o = parse_options(args);
  auto conn = connect_db(o.conninfo);
  require_table(*conn, "pgmate.learning_runs");
  const std::string options = options_json(*conn, o);
  const NoticePrinter printer(*conn);
  with_db_errors([&] {
    pqxx::nontransaction tx(*conn);
    // The backend stops soon after this client is gone, instead of at its next NOTICE.
    tx.exec("SET client_connection_check_interval = '1s'");
  });
  // The run's finished iterations (0 before it exists).
  const auto finished = [&] {
    return with_db_errors([&] {
      pqxx::nontransaction tx(*conn);
      const pqxx::result r = tx.exec_params(
          "SELECT iterations FROM pgmate.learning_runs WHERE name = $1 AND owner = pgmate.acting_role()", o.run);
      return r.empty() ? 0 : r[0][0].as<int>();
    });
  };
  // stop_after leaves the iteration in progress: one call, whatever the count.
  const bool one_call = std::any_of(o.options.begin(), o.options.end(),
                                    [](const auto& kv) { return kv.first == "stop_after"; });
  const int start = finished();
  const int calls = o.more ? o.iterations : std::max(0, o.iterations - start);
  if (!o.more && calls == 0)
    std::cout << "run " << o.run << " has " << start << " iterations already (--more N plays more)" << std::endl;
  for (int i = 0; i < (one_call ? std::min(calls, 1) : calls); ++i) {
    with_db_errors([&] {
      pqxx::nontransaction tx(*conn);
      // A run held by another session is often held by one whose client has just gone
      // (Ctrl-C, a killed terminal): its backend stops within a few seconds.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      for (;;) {
        try {
          tx.exec_params("CALL pgmate.learn($1, 1, $2::jsonb)", o.run, options);
          break;
        } catch (const pqxx::sql_error& e) {
          if (e.sqlstate() != "55P03" || std::chrono::steady_clock::now() > deadline) throw;
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
        }
      }
      const pqxx::result r = tx.exec_params(
          "SELECT iteration, decision, games, positions, policy_loss, value_loss, kl, score_vs_best, elo, elo_lower,"
          "       elo_upper, veto_level, seconds"
          " FROM pgmate.learning_log WHERE run = $1 AND owner = pgmate.acting_role() ORDER BY iteration DESC LIMIT 1",
          o.run);
      if (r.empty()) return;
      const auto text = [](const pqxx::field& f) { return f.is_null() ? std::string("-") : f.as<std::string>(); };
      std::cout << "iteration " << text(r[0][0]) << ": " << text(r[0][1]) << "; " << text(r[0][2]) << " games, "
                << text(r[0][3]) << " positions; policy loss " << text(r[0][4]) << ", value loss " << text(r[0][5])
                << ", KL " << text(r[0][6]);
      if (!r[0][7].is_null())
        std::cout << "; score against the best " << text(r[0][7]) << ", Elo " << text(r[0][8]) << " ["
                  << text(r[0][9]) << ", " << text(r[0][10]) << "]";
      std::cout << "; veto level " << text(r[0][11]) << "; " << text(r[0][12]) << " s" << std::endl;
    });
  }
  with_db_errors([&] {
    pqxx::nontransaction tx(*conn);
    const pqxx::result r = tx.exec_params(
        "SELECT iterations, best_network FROM pgmate.learning_runs WHERE name = $1 AND owner = pgmate.acting_role()",
        o.run);
    if (!r.empty())
      std::cout << "run " << o.run << ": " << r[0][0].as<std::string>() << " iterations, best network "
                << r[0][1].as<std::string>() << std::endl;
  });
  return 0;
}

}  // namespace pgmate::cli
