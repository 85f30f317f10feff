// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The critical path of a trace (weft trace summary, docs/traces.md): the
// heaviest chain of jobs by measured duration, along the edges the trace's
// flow events draw, or, without flows, the heaviest chain of one process's
// jobs in which each starts after the one before ended (an upper bound on
// the graph's critical path).
#include "trace_critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace weft::tool {

namespace {

// Max over a fixed array, searchable for the last position in a range whose
// value reaches a bound: which job of a track encloses a time, in O(log n)
// even when jobs nest deeply.
class MaxTree {
 public:
  explicit MaxTree(const std::vector<double>& values) {
    while (size_ < values.size()) size_ *= 2;
    tree_.assign(2 * size_, -std::numeric_limits<double>::infinity());
    std::copy(values.begin(), values.end(), tree_.begin() + static_cast<std::ptrdiff_t>(size_));
    for (std::size_t node = size_ - 1; node >= 1; --node)
      tree_[node] = std::max(tree_[2 * node], tree_[2 * node + 1]);
  }
  // The last position in [lo, hi) whose value is >= x (> x when strict); -1 when none.
  std::ptrdiff_t last(std::size_t lo, std::size_t hi, double x, bool strict) const {
    return search(1, 0, size_, lo, hi, x, strict);
  }

 private:
  std::ptrdiff_t search(std::size_t node, std::size_t node_lo, std::size_t node_hi, std::size_t lo,
                        std::size_t hi, double x, bool strict) const {
    if (node_hi <= lo || hi <= node_lo) return -1;
    if (strict ? !(tree_[node] > x) : !(tree_[node] >= x)) return -1;
    if (node >= size_) return static_cast<std::ptrdiff_t>(node - size_);
    const std::size_t mid = (node_lo + node_hi) / 2;
    const std::ptrdiff_t right = search(2 * node + 1, mid, node_hi, lo, hi, x, strict);
    return right >= 0 ? right : search(2 * node, node_lo, mid, lo, hi, x, strict);
  }
  std::size_t size_ = 1;
  std::vector<double> tree_;
};

// Binds flow events to the jobs of their track.
class FlowBinder {
 public:
  explicit FlowBinder(const std::vector<TraceJob>& jobs) : jobs_(jobs), order_(jobs.size()) {
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
      const TraceJob &x = jobs[a], &y = jobs[b];
      if (x.pid != y.pid) return x.pid < y.pid;
      if (x.worker != y.worker) return x.worker < y.worker;
      if (x.start_us != y.start_us) return x.start_us < y.start_us;
      return a < b;
    });
    std::vector<double> ends(order_.size());
    for (std::size_t p = 0; p < order_.size(); ++p) {
      const TraceJob& job = jobs[order_[p]];
      ends[p] = job_end(job);
      auto [it, inserted] = tracks_.try_emplace(Track(job.pid, job.worker), p, p + 1);
      if (!inserted) it->second.second = p + 1;
    }
    ends_ = std::make_unique<MaxTree>(ends);
  }

  // The job `flow` binds to (an index into jobs), or -1. "s" leaves the job
  // it ends: of the jobs around ts, the one that started before ts, so that
  // a flow at the boundary of two jobs leaves the first. "t" and "f" with
  // bp "e" arrive: the job that ends after ts. Among nested jobs, the inner.
  std::ptrdiff_t bind(const TraceFlow& flow) const {
    const auto track = tracks_.find(Track(flow.pid, flow.worker));
    if (track == tracks_.end()) return -1;
    const auto [begin, end] = track->second;
    const auto starts_before = [&](std::size_t p, double t) { return jobs_[order_[p]].start_us < t; };
    // Positions [begin, at) start before ts, [at, after) at ts.
    const std::size_t at = first_not(begin, end, [&](std::size_t p) { return starts_before(p, flow.ts_us); });
    const std::size_t after =
        first_not(at, end, [&](std::size_t p) { return jobs_[order_[p]].start_us <= flow.ts_us; });
    std::ptrdiff_t found = -1;
    if (!flow.binds_enclosing) {
      found = at < end ? static_cast<std::ptrdiff_t>(at) : -1;  // the next job
    } else if (flow.phase == 's') {
      found = ends_->last(begin, at, flow.ts_us, false);
      if (found < 0 && after > at) found = static_cast<std::ptrdiff_t>(after - 1);
    } else {
      found = ends_->last(begin, after, flow.ts_us, true);
      if (found < 0) found = ends_->last(begin, after, flow.ts_us, false);
    }
    return found < 0 ? -1 : static_cast<std::ptrdiff_t>(order_[static_cast<std::size_t>(found)]);
  }

 private:
  // The first position in [lo, hi) where `below` is false (it is true, then false).
  template <class Below>
  static std::size_t first_not(std::size_t lo, std::size_t hi, Below below) {
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (below(mid)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  const std::vector<TraceJob>& jobs_;
  std::vector<std::size_t> order_;                               // jobs by (pid, tid, start, index)
  std::map<Track, std::pair<std::size_t, std::size_t>> tracks_;  // positions [first, last) in order_
  std::unique_ptr<MaxTree> ends_;                                // job ends, by position in order_
};

// The edges the trace's flows draw between its jobs, as (from, to) job
// indices; an edge must point forward in (start, index) order, so the
// edges make a DAG whatever the file says.
struct FlowEdges {
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::size_t ignored = 0;
};

FlowEdges flow_edges(const Trace& trace, const std::vector<std::size_t>& place) {
  FlowEdges out;
  const auto add = [&](std::ptrdiff_t from, std::ptrdiff_t to) {
    if (from < 0 || to < 0 || place[static_cast<std::size_t>(from)] >= place[static_cast<std::size_t>(to)]) {
      ++out.ignored;
    } else {
      out.edges.emplace_back(static_cast<std::size_t>(from), static_cast<std::size_t>(to));
    }
  };
  if (!trace.flows.empty()) {
    const FlowBinder binder(trace.jobs);
    std::map<std::string, std::vector<std::size_t>> by_key;
    for (std::size_t i = 0; i < trace.flows.size(); ++i) by_key[trace.flows[i].key].push_back(i);
    const auto step = [](char phase) { return phase == 's' ? 0 : phase == 't' ? 1 : 2; };
    for (auto& [key, flows] : by_key) {
      std::stable_sort(flows.begin(), flows.end(), [&](std::size_t a, std::size_t b) {
        const TraceFlow &x = trace.flows[a], &y = trace.flows[b];
        if (x.ts_us != y.ts_us) return x.ts_us < y.ts_us;
        return step(x.phase) < step(y.phase);
      });
      std::ptrdiff_t previous = -1;  // the job the flow last bound to
      bool open = false;             // a start was seen and not finished
      for (std::size_t i : flows) {
        const TraceFlow& flow = trace.flows[i];
        const std::ptrdiff_t job = binder.bind(flow);
        if (flow.phase != 's') {
          if (open) {
            add(previous, job);
          } else {
            ++out.ignored;  // a step or finish without a start
          }
        }
        open = flow.phase != 'f';
        previous = job;
      }
    }
  }
  // Flow v2: a job with flow_in follows the latest job before it with
  // flow_out and the same bind_id.
  std::map<std::string, std::vector<std::size_t>> bound;
  for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& job = trace.jobs[i];
    if (job.flow_in || job.flow_out) bound[std::to_string(job.pid) + " " + job.bind_id].push_back(i);
  }
  for (auto& [key, jobs] : bound) {
    std::sort(jobs.begin(), jobs.end(), [&](std::size_t a, std::size_t b) { return place[a] < place[b]; });
    std::ptrdiff_t out_job = -1;
    for (std::size_t i : jobs) {
      if (trace.jobs[i].flow_in) add(out_job, static_cast<std::ptrdiff_t>(i));
      if (trace.jobs[i].flow_out) out_job = static_cast<std::ptrdiff_t>(i);
    }
  }
  return out;
}

// Longest chains by summed duration: best[i] is the heaviest chain that ends
// with job i, and came[i] the job before it there (-1: none).
struct Chains {
  std::vector<double> best;
  std::vector<std::ptrdiff_t> came;
};

// Along `edges`, visiting jobs in `in_order` (by start: a topological order, as
// every edge points forward in it); place[i] is job i's position there.
Chains chains_along_edges(const std::vector<TraceJob>& jobs, const std::vector<std::size_t>& in_order,
                          const std::vector<std::size_t>& place,
                          std::vector<std::pair<std::size_t, std::size_t>> edges) {
  Chains c{std::vector<double>(jobs.size(), 0.0), std::vector<std::ptrdiff_t>(jobs.size(), -1)};
  std::sort(edges.begin(), edges.end(),
            [&](const auto& a, const auto& b) { return place[a.second] < place[b.second]; });
  std::size_t e = 0;
  for (std::size_t i : in_order) {
    double before = 0;
    for (; e < edges.size() && edges[e].second == i; ++e) {
      const std::size_t from = edges[e].first;
      if (c.came[i] < 0 || c.best[from] > before) {
        before = c.best[from];
        c.came[i] = static_cast<std::ptrdiff_t>(from);
      }
    }
    c.best[i] = before + jobs[i].duration_us;
  }
  return c;
}

// Without edges: per process, job i may follow any job that ended by its
// start (weighted interval scheduling, O(n log n)).
Chains chains_in_time(const std::vector<TraceJob>& jobs) {
  Chains c{std::vector<double>(jobs.size(), 0.0), std::vector<std::ptrdiff_t>(jobs.size(), -1)};
  std::map<std::int64_t, std::vector<std::size_t>> by_pid;
  for (std::size_t i = 0; i < jobs.size(); ++i) by_pid[jobs[i].pid].push_back(i);
  std::vector<std::size_t> position(jobs.size());
  for (auto& [pid, by_start] : by_pid) {
    std::stable_sort(by_start.begin(), by_start.end(), [&](std::size_t a, std::size_t b) {
      if (jobs[a].start_us != jobs[b].start_us) return jobs[a].start_us < jobs[b].start_us;
      return job_end(jobs[a]) < job_end(jobs[b]);
    });
    for (std::size_t p = 0; p < by_start.size(); ++p) position[by_start[p]] = p;
    std::vector<std::size_t> by_end = by_start;
    std::sort(by_end.begin(), by_end.end(), [&](std::size_t a, std::size_t b) {
      if (job_end(jobs[a]) != job_end(jobs[b])) return job_end(jobs[a]) < job_end(jobs[b]);
      return position[a] < position[b];
    });
    std::size_t admitted = 0;  // by_end[0, admitted) ended by the current job's start
    double before = 0;
    std::ptrdiff_t before_job = -1;
    for (std::size_t i : by_start) {
      // A zero-length job at the current start precedes it only if it was
      // visited first: no job follows itself.
      for (; admitted < by_end.size(); ++admitted) {
        const std::size_t j = by_end[admitted];
        const double end = job_end(jobs[j]);
        if (end > jobs[i].start_us || (end == jobs[i].start_us && position[j] >= position[i])) break;
        if (c.best[j] > before) {
          before = c.best[j];
          before_job = static_cast<std::ptrdiff_t>(j);
        }
      }
      c.best[i] = before + jobs[i].duration_us;
      c.came[i] = before_job;
    }
  }
  return c;
}

}  // namespace

CriticalPath critical_path(const Trace& trace) {
  CriticalPath path;
  const std::vector<TraceJob>& jobs = trace.jobs;
  std::vector<std::size_t> in_order(jobs.size()), place(jobs.size());
  std::iota(in_order.begin(), in_order.end(), std::size_t{0});
  std::stable_sort(in_order.begin(), in_order.end(),
                   [&](std::size_t a, std::size_t b) { return jobs[a].start_us < jobs[b].start_us; });
  for (std::size_t r = 0; r < in_order.size(); ++r) place[in_order[r]] = r;
  FlowEdges flows = flow_edges(trace, place);
  path.edges = flows.edges.size();
  path.ignored_flows = flows.ignored;
  path.basis = path.edges > 0 ? "edges" : "time";
  const Chains c = path.edges > 0 ? chains_along_edges(jobs, in_order, place, std::move(flows.edges))
                                  : chains_in_time(jobs);
  std::ptrdiff_t last = -1;
  for (std::size_t i : in_order) {
    if (last < 0 || c.best[i] > c.best[static_cast<std::size_t>(last)]) last = static_cast<std::ptrdiff_t>(i);
  }
  if (last < 0) return path;
  path.duration_us = c.best[static_cast<std::size_t>(last)];
  for (std::ptrdiff_t i = last; i >= 0; i = c.came[static_cast<std::size_t>(i)])
    path.jobs.push_back(jobs[static_cast<std::size_t>(i)]);
  std::reverse(path.jobs.begin(), path.jobs.end());
  return path;
}

}  // namespace weft::tool
