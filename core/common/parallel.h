// Runs one function on several threads at once (the calling thread counts as one) and
// waits for all: for work that threads share through an atomic counter, such as the
// root moves of a perft.
#pragma once

#include <thread>
#include <vector>

namespace pgmate {

template <class F>
void run_on_threads(int threads, F&& work) {
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();
}

}  // namespace pgmate
