// One run of the solver with euler2d's options, its progress line, images
// and summary: the whole program after the arguments are parsed. A template
// on where the kernels run, so that main.cpp instantiates the host run and
// gpu_run.cu (compiled by nvcc) the GPU run from the same source.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include <weft/weft.hpp>

#include <nlohmann/json.hpp>

#include "../output_file.hpp"
#include "exact_riemann.hpp"
#include "options.hpp"
#include "png_image.hpp"
#include "solver.hpp"

namespace weft::euler {

// Progress on a terminal: rewritten in place at most a few times a second.
class Progress {
 public:
  Progress(bool enabled, double cells) : enabled_(enabled), cells_(cells) {}
  void update(const weft::euler::StepInfo& info) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\rstep %6ld  t %.5f  dt %.3e  %7.2f Mcells/s ", info.step, info.time, info.dt,
                 cells_ * static_cast<double>(info.step) / seconds / 1e6);
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fputs("\r\033[K", stderr);
  }

 private:
  bool enabled_;
  double cells_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

// The image --png-every writes at `step`.
inline std::string periodic_image_name(long step) {
  char name[64];
  std::snprintf(name, sizeof name, "euler2d_density_%06ld.png", step);
  return name;
}

// Runs each output's write and keeps its failure (a message naming the
// file), so that one failed output does not stop the others.
class OutputFailures {
 public:
  template <class Write>
  bool attempt(Write&& write) {
    try {
      write();
      return true;
    } catch (const std::exception& e) {
      messages_.emplace_back(e.what());
      return false;
    }
  }
  // Prints every failure on stderr; the exit code: 0 if there was none.
  int report() const {
    for (const std::string& m : messages_) std::fprintf(stderr, "euler2d: %s\n", m.c_str());
    return messages_.empty() ? 0 : 1;
  }

 private:
  std::vector<std::string> messages_;
};

template <class Layout, bool Gpu>
int run_solver(const Options& o, const SolverConfig& config) {
  weft::ExecutorConfig ex;
  if (o.threads > 0) ex.cpu_workers = o.threads;
  if constexpr (!Gpu) {
    ex.gpu_workers = 0;
    ex.use_cuda = false;
  }
  weft::Executor executor(ex);
  Solver<Layout, Gpu> solver(config);

  const double end_time = o.end_time >= 0.0 ? o.end_time : (config.problem == Problem::sod ? 0.25 : 0.1);
  const double cells = static_cast<double>(config.nx * config.ny);
  const auto density_image = [&](const std::string& path) {
    // Log scale: the bubble (0.1) and the shocked gas (about 4.5, more where
    // it is compressed further) both stay readable.
    write_png(path, config.nx, config.ny, [&](std::size_t i, std::size_t j) { return solver.density(i, j); },
              {0.1, 8.0, true});
  };
  Progress progress(!o.quiet && isatty(STDERR_FILENO) != 0, cells);
  OutputFailures failures;
  bool periodic_images = o.png_every > 0;  // until one fails: the run goes on without them
  solver.on_step([&](const StepInfo& info) {
    progress.update(info);
    if (periodic_images && info.step % o.png_every == 0) {
      solver.sync_host();  // the step's GPU work is done when on_step runs
      periodic_images = failures.attempt([&] { density_image(periodic_image_name(info.step)); });
    }
  });

  if (!o.trace.empty()) executor.start_trace();
  const auto start = std::chrono::steady_clock::now();
  solver.run(executor, o.steps, o.steps > 0 && o.end_time < 0.0 ? 0.0 : end_time);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish();
  if (!o.trace.empty()) failures.attempt([&] { executor.write_trace(o.trace); });
  solver.sync_host();
  if (!o.dump_graph.empty()) {
    failures.attempt(
        [&] { weft::examples::write_file(o.dump_graph, solver.graph().to_json().dump(2) + '\n'); });
  }
  const bool png_written = !o.png.empty() && failures.attempt([&] { density_image(o.png); });

  const StepInfo& info = solver.info();
  std::string checksum;
  if (o.checksum) {
    // FNV-1a over the bytes of every conserved variable of every cell.
    std::uint64_t hash = 1469598103934665603ull;
    for (std::size_t j = 0; j < config.ny; ++j) {
      for (std::size_t i = 0; i < config.nx; ++i) {
        const auto cell = solver.host_field()(i, j);
        for (std::size_t k = 0; k < std::remove_cvref_t<decltype(cell)>::conserved_count; ++k) {
          const double value = cell.conserved(k);
          unsigned char bytes[sizeof value];
          std::memcpy(bytes, &value, sizeof value);
          for (unsigned char b : bytes) hash = (hash ^ b) * 1099511628211ull;
        }
      }
    }
    char text[48];
    std::snprintf(text, sizeof text, "; checksum %016llx", static_cast<unsigned long long>(hash));
    checksum = text;
  }
  const std::string where =
      Gpu ? std::to_string(o.gpus) + " GPU(s)" : std::to_string(executor.cpu_worker_count()) + " threads";
  // Sod's tube has an exact solution: how far the run is from it.
  std::string accuracy;
  if (config.problem == Problem::sod && info.time > 0.0) {
    const double error =
        sod_l1_density_error(config.nx, config.ny, info.time, config.gamma,
                             [&](std::size_t i, std::size_t j) { return solver.density(i, j); });
    char text[96];
    std::snprintf(text, sizeof text, "; L1 density error against the exact solution %.3e", error);
    accuracy = text;
  }
  std::printf(
      "euler2d: %s %zux%zu, %zu partitions x %zu sub-partitions, %s layout, %s: %ld steps to t = %.4f in "
      "%.2f s, %.2f Mcells/s%s%s%s%s\n",
      o.problem.c_str(), config.nx, config.ny, config.partitions, config.sub_partitions, o.layout.c_str(),
      where.c_str(), info.step, info.time, seconds, cells * static_cast<double>(info.step) / seconds / 1e6,
      accuracy.c_str(), checksum.c_str(), png_written ? "; density image: " : "",
      png_written ? o.png.c_str() : "");
  return failures.report();
}

}  // namespace weft::euler
