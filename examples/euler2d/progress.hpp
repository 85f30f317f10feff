// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// euler2d's progress line on a terminal, rewritten in place at most five
// times a second: step, time, how far the run is and when it should end.
//
//   step    120  t 0.04102  dt 3.417e-04   41.0%  ETA 1m12s     5.31 Mcells/s
//
// How far: the share of the end time reached, or of --steps when the run
// stops by steps, whichever is further (the run stops at the first).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "solver.hpp"

namespace weft::euler {

// The share of the run done, in [0, 1]: max_steps and end_time are the
// run's limits (0: none).
inline double run_fraction(const StepInfo& info, long max_steps, double end_time) {
  double done = 0.0;
  if (max_steps > 0) done = static_cast<double>(info.step) / static_cast<double>(max_steps);
  if (end_time > 0.0) done = std::max(done, info.time / end_time);
  return std::clamp(done, 0.0, 1.0);
}

// The time left when `fraction` of the run took `elapsed` seconds, as
// "42s", "3m05s" or "2h07m"; "?" before there is anything to go on.
inline std::string format_eta(double elapsed, double fraction) {
  if (!(fraction > 0.0) || !(elapsed >= 0.0)) return "?";
  const double left = elapsed * (1.0 - fraction) / fraction;
  if (!std::isfinite(left) || left >= 100.0 * 3600.0) return "?";
  const long s = std::lround(left);
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%lds", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s / 60 % 60);
  }
  return text;
}

class Progress {
 public:
  // max_steps, end_time: the run's limits, as run_fraction takes them.
  Progress(bool enabled, double cells, long max_steps, double end_time)
      : enabled_(enabled), cells_(cells), max_steps_(max_steps), end_time_(end_time) {}
  void update(const StepInfo& info) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double done = run_fraction(info, max_steps_, end_time_);
    // \033[K clears what a longer previous line left.
    std::fprintf(stderr, "\rstep %6ld  t %.5f  dt %.3e  %5.1f%%  ETA %s  %7.2f Mcells/s\033[K", info.step,
                 info.time, info.dt, 100.0 * done, format_eta(seconds, done).c_str(),
                 cells_ * static_cast<double>(info.step) / seconds / 1e6);
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fputs("\r\033[K", stderr);
  }

 private:
  bool enabled_;
  double cells_;
  long max_steps_;
  double end_time_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

}  // namespace weft::euler
