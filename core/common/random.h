// A small, portable random source for search and self-play: the same seed gives the same
// games on every platform (std:: distributions are implementation-defined).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace pgmate::mcts {

// SplitMix64: turns (seed, index) pairs into well-mixed 64-bit values.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// xoshiro256**.
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) { reseed(seed); }
  void reseed(std::uint64_t seed) {
    for (auto& s : state_) s = seed = mix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, n), n > 0 (Lemire's multiply; the bias is below 2^-32 for n < 2^32).
  std::uint32_t below(std::uint32_t n) {
    return std::uint32_t((std::uint64_t(std::uint32_t(next() >> 32)) * n) >> 32);
  }
  // Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  // Standard normal (Marsaglia's polar method).
  double normal() {
    for (;;) {
      const double u = 2 * uniform() - 1, v = 2 * uniform() - 1, s = u * u + v * v;
      if (s > 0 && s < 1) return u * std::sqrt(-2 * std::log(s) / s);
    }
  }
  // Gamma(shape, 1) by Marsaglia and Tsang; shape < 1 through the boost x * U^(1/shape).
  double gamma(double shape) {
    if (shape < 1) {
      double u = uniform();
      while (u == 0) u = uniform();
      return gamma(shape + 1) * std::pow(u, 1 / shape);
    }
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const double u = uniform();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v;
      if (u > 0 && std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
    }
  }
  // A sample of the symmetric Dirichlet distribution with parameter alpha.
  std::vector<float> dirichlet(int n, double alpha) {
    std::vector<float> out(n);
    double sum = 0;
    for (auto& x : out) sum += x = float(gamma(alpha));
    for (auto& x : out) x = sum > 0 ? float(x / sum) : 1.0f / float(n);
    return out;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace pgmate::mcts
