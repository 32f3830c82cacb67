#include "sloserve/mdp/policy_io.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>

#include "sloserve/core/declared_key.h"

namespace sloserve::mdp {

namespace {

std::string G17(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

int IndexOf(const PolicyData& d, VariantId id) {
  for (size_t i = 0; i < d.variant_ids.size(); ++i) {
    if (d.variant_ids[i] == id) return static_cast<int>(i);
  }
  return -1;
}

std::string Cell(const PolicyData& d, const Action& a) {
  return std::to_string(IndexOf(d, a.variant)) + ":" + std::to_string(a.batch);
}

class Reader {
 public:
  Reader(const std::string& text, std::string origin) : in_(text), origin_(std::move(origin)) {}
  // Next non-empty line split at the first space into (word, rest).
  bool Next(std::string* word, std::string* rest) {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      const size_t sp = line.find(' ');
      *word = line.substr(0, sp);
      *rest = sp == std::string::npos ? "" : line.substr(sp + 1);
      return true;
    }
    return false;
  }
  Status Error(const std::string& msg) const {
    return InvalidArgumentError(origin_ + ":" + std::to_string(line_) + ": " + msg);
  }

 private:
  std::istringstream in_;
  std::string origin_;
  int line_ = 0;
};

StatusOr<Action> ParseCell(const Reader& r, const PolicyData& d, const std::string& cell) {
  int vi = 0, b = 0;
  char tail = 0;
  if (std::sscanf(cell.c_str(), "%d:%d%c", &vi, &b, &tail) != 2 || vi < 0 ||
      vi >= static_cast<int>(d.variant_ids.size()) || b < 1 || b > d.max_queue) {
    return r.Error("bad action '" + cell + "'");
  }
  return Action{d.variant_ids[vi], b};
}

StatusOr<Policy> ParseBlock(Reader& r) {
  PolicyData d;
  std::string w, rest;
  bool have_full = false;
  while (r.Next(&w, &rest)) {
    std::istringstream ls(rest);
    if (w == "end") {
      const size_t want = static_cast<size_t>(d.max_queue) * d.levels_us.size();
      if (d.levels_us.empty() || d.table.size() != want || !have_full) {
        return r.Error("policy block incomplete (levels, rows or full missing)");
      }
      return Policy(std::move(d));
    }
    if (w == "key") {
      d.key = rest;
    } else if (w == "suite") {
      d.suite = rest;
    } else if (w == "hardware") {
      d.hardware = rest;
    } else if (w == "task") {
      d.task = rest;
    } else if (w == "variant") {
      VariantId id = 0;
      std::string name;
      if (!(ls >> id >> name)) return r.Error("expected: variant ID NAME");
      // Cells name variants by position: a repeated one would make two cells alike.
      for (size_t i = 0; i < d.variant_ids.size(); ++i) {
        if (d.variant_ids[i] == id || d.variant_names[i] == name)
          return r.Error("variant " + std::to_string(id) + " " + name + " given twice");
      }
      d.variant_ids.push_back(id);
      d.variant_names.push_back(name);
    } else if (w == "slo_us") {
      long long v = 0;
      if (!(ls >> v) || v <= 0) return r.Error("bad slo_us");
      d.slo = Duration(v);
    } else if (w == "workers") {
      if (!(ls >> d.workers) || d.workers < 1) return r.Error("bad workers");
    } else if (w == "arrival") {
      std::string kind;
      double cv = 1;
      ls >> kind >> cv;
      auto a = ParseArrival(kind, cv);
      if (!a.ok()) return r.Error(a.status().message());
      d.arrival = *a;
    } else if (w == "load_qps") {
      const std::optional<double> qps = ParseNumber(rest);
      if (!qps || *qps < 0) return r.Error("bad load_qps '" + rest + "' (expected a number >= 0)");
      d.load_qps = *qps;
    } else if (w == "discretization") {
      std::string kind;
      int dd = 0;
      ls >> kind >> dd;
      auto di = ParseDiscretization(kind, dd);
      if (!di.ok()) return r.Error(di.status().message());
      d.discretization = *di;
    } else if (w == "batching") {
      auto b = ParseBatching(rest);
      if (!b.ok()) return r.Error(b.status().message());
      d.batching = *b;
    } else if (w == "max_queue") {
      if (!(ls >> d.max_queue) || d.max_queue < 1) return r.Error("bad max_queue");
    } else if (w == "latency_quantile") {
      ls >> d.latency_quantile;
    } else if (w == "criterion") {
      auto c = ParseCriterion(rest);
      if (!c.ok()) return r.Error(c.status().message());
      d.criterion = *c;
    } else if (w == "expected_accuracy") {
      ls >> d.expected_accuracy;
    } else if (w == "expected_violation") {
      ls >> d.expected_violation;
    } else if (w == "accuracy_per_query") {
      ls >> d.accuracy_per_query;
    } else if (w == "full_state_probability") {
      ls >> d.full_state_probability;
    } else if (w == "overloaded") {
      int v = 0;
      ls >> v;
      d.overloaded = v != 0;
    } else if (w == "converged") {
      int v = 0;
      ls >> v;
      d.converged = v != 0;
    } else if (w == "sweeps") {
      ls >> d.sweeps;
    } else if (w == "note") {
      d.notes += rest + "\n";
    } else if (w == "levels") {
      if (!d.levels_us.empty()) return r.Error("levels given twice");
      // The count is checked against the values on the line before anything is sized
      // by it: a corrupt count must not allocate gigabytes.
      std::string count_text;
      ls >> count_text;
      std::vector<std::string> values;
      for (std::string v; ls >> v;) values.push_back(v);
      const std::optional<int64_t> count = ParseInteger(count_text);
      if (!count || *count < 1) {
        return r.Error("bad levels count '" + count_text + "' (expected a whole number >= 1)");
      }
      if (static_cast<uint64_t>(*count) != values.size()) {
        return r.Error("levels count " + count_text + " but " + std::to_string(values.size()) +
                       " values on the line");
      }
      d.levels_us.reserve(values.size());
      for (const std::string& v : values) {
        const std::optional<int64_t> level = ParseInteger(v);
        if (!level || (!d.levels_us.empty() && *level <= d.levels_us.back())) {
          return r.Error("levels must be " + count_text + " ascending integers");
        }
        d.levels_us.push_back(*level);
      }
    } else if (w == "row") {
      if (d.levels_us.empty()) return r.Error("row before levels");
      const size_t nl = d.levels_us.size();
      int n = 0;
      if (!(ls >> n) || n != static_cast<int>(d.table.size() / nl) + 1) {
        return r.Error("rows must come in order 1..max_queue after levels");
      }
      std::string cell;
      for (size_t j = 0; j < nl; ++j) {
        if (!(ls >> cell)) return r.Error("row " + std::to_string(n) + ": too few cells");
        ASSIGN_OR_RETURN(Action a, ParseCell(r, d, cell));
        d.table.push_back(a);
      }
      if (ls >> cell) {
        return r.Error("row " + std::to_string(n) + ": more than the " + std::to_string(nl) +
                       " cells of the levels");
      }
    } else if (w == "full") {
      ASSIGN_OR_RETURN(d.full_action, ParseCell(r, d, rest));
      have_full = true;
    } else {
      return r.Error("unknown field '" + w + "'");
    }
  }
  return r.Error("unexpected end of file inside a policy block");
}

}  // namespace

std::string WritePolicyText(const Policy& policy) {
  const PolicyData& d = policy.data();
  std::ostringstream o;
  o << "policy 1\n";
  o << "key " << d.key << "\nsuite " << d.suite << "\nhardware " << d.hardware << "\ntask "
    << d.task << "\n";
  for (size_t i = 0; i < d.variant_ids.size(); ++i) {
    o << "variant " << d.variant_ids[i] << " " << d.variant_names[i] << "\n";
  }
  o << "slo_us " << d.slo.count() << "\nworkers " << d.workers << "\n";
  o << "arrival " << (d.arrival.kind == ArrivalKind::kPoisson ? "poisson" : "gamma") << " "
    << G17(d.arrival.cv) << "\n";
  o << "load_qps " << G17(d.load_qps) << "\n";
  o << "discretization "
    << (d.discretization.kind == DiscretizationKind::kModelBased ? "md" : "fld") << " "
    << d.discretization.d << "\n";
  o << "batching " << BatchingName(d.batching) << "\nmax_queue " << d.max_queue << "\n";
  o << "latency_quantile " << G17(d.latency_quantile) << "\n";
  o << "criterion " << CriterionName(d.criterion) << "\n";
  o << "expected_accuracy " << G17(d.expected_accuracy) << "\n";
  o << "expected_violation " << G17(d.expected_violation) << "\n";
  o << "accuracy_per_query " << G17(d.accuracy_per_query) << "\n";
  o << "full_state_probability " << G17(d.full_state_probability) << "\n";
  o << "overloaded " << (d.overloaded ? 1 : 0) << "\nconverged " << (d.converged ? 1 : 0)
    << "\nsweeps " << d.sweeps << "\n";
  std::istringstream notes(d.notes);
  for (std::string line; std::getline(notes, line);) {
    if (!line.empty()) o << "note " << line << "\n";
  }
  o << "levels " << d.levels_us.size();
  for (int64_t v : d.levels_us) o << " " << v;
  o << "\n";
  const size_t nl = d.levels_us.size();
  for (int n = 1; n <= d.max_queue; ++n) {
    o << "row " << n;
    for (size_t j = 0; j < nl; ++j) o << " " << Cell(d, d.table[(n - 1) * nl + j]);
    o << "\n";
  }
  o << "full " << Cell(d, d.full_action) << "\nend\n";
  return o.str();
}

std::string WritePolicySetText(const std::string& set_key, const std::vector<Policy>& set) {
  std::string out = "sloserve-mdp-policy-set 1\nset_key " + set_key + "\ncount " +
                    std::to_string(set.size()) + "\n";
  for (const Policy& p : set) out += WritePolicyText(p);
  return out;
}

StatusOr<PolicySetFile> ParsePolicySetText(const std::string& text, const std::string& origin) {
  Reader r(text, origin);
  std::string w, rest;
  if (!r.Next(&w, &rest) || w != "sloserve-mdp-policy-set" || rest != "1") {
    return r.Error("not a policy set (expected 'sloserve-mdp-policy-set 1')");
  }
  PolicySetFile out;
  if (!r.Next(&w, &rest) || w != "set_key") return r.Error("expected set_key");
  out.set_key = rest;
  if (!r.Next(&w, &rest) || w != "count") return r.Error("expected count");
  const std::optional<int64_t> count = ParseInteger(rest);
  if (!count || *count < 0) return r.Error("expected count N (a whole number >= 0)");
  for (int64_t i = 0; i < *count; ++i) {
    if (!r.Next(&w, &rest) || w != "policy" || rest != "1") return r.Error("expected 'policy 1'");
    ASSIGN_OR_RETURN(Policy p, ParseBlock(r));
    out.policies.push_back(std::move(p));
  }
  if (r.Next(&w, &rest))
    return r.Error("trailing content after " + std::to_string(*count) + " policies");
  return out;
}

std::string SummarizePolicy(const Policy& policy) {
  const PolicyData& d = policy.data();
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "load %.1f qps: expected accuracy %.3f%%, violation %.4f%%, full-state %.4f%%%s",
                d.load_qps, d.expected_accuracy, 100 * d.expected_violation,
                100 * d.full_state_probability, d.overloaded ? " [OVERLOADED]" : "");
  return buf;
}

std::string FormatPolicyTable(const Policy& policy, int max_columns) {
  const PolicyData& d = policy.data();
  const int nl = static_cast<int>(d.levels_us.size());
  // Merge adjacent slack levels whose whole column is equal.
  std::vector<int> starts;
  for (int j = 0; j < nl; ++j) {
    bool same = j > 0;
    for (int n = 1; same && n <= d.max_queue; ++n) {
      same = d.table[(n - 1) * nl + j] == d.table[(n - 1) * nl + j - 1];
    }
    if (!same) starts.push_back(j);
  }
  // Still too wide: keep every k-th column start.
  if (static_cast<int>(starts.size()) > max_columns) {
    std::vector<int> thin;
    const double step = static_cast<double>(starts.size()) / max_columns;
    for (int i = 0; i < max_columns; ++i) thin.push_back(starts[static_cast<int>(i * step)]);
    starts = thin;
  }
  auto cell = [&](const Action& a) {
    const int vi = IndexOf(d, a.variant);
    return (vi < 0 ? std::string("?") : std::to_string(vi)) + "/" + std::to_string(a.batch);
  };
  std::ostringstream o;
  o << SummarizePolicy(policy) << "\n";
  o << "suite " << d.suite << ", hardware " << d.hardware << ", SLO " << d.slo.count() / 1000.0
    << " ms, " << d.workers << " workers, " << ArrivalName(d.arrival) << ", "
    << DiscretizationName(d.discretization) << ", " << BatchingName(d.batching) << " batching\n";
  o << "cells: variant/batch; columns: head slack >= the level (ms); rows: queued\n";
  char buf[64];
  o << "    n |";
  for (int j : starts) {
    std::snprintf(buf, sizeof(buf), "%7.1f", d.levels_us[j] / 1000.0);
    o << buf;
  }
  o << "\n------+" << std::string(7 * starts.size(), '-') << "\n";
  for (int n = 1; n <= d.max_queue; ++n) {
    std::snprintf(buf, sizeof(buf), "%5d |", n);
    o << buf;
    for (int j : starts) {
      std::snprintf(buf, sizeof(buf), "%7s", cell(d.table[(n - 1) * nl + j]).c_str());
      o << buf;
    }
    o << "\n";
  }
  o << " full | " << cell(d.full_action) << "\nvariants:";
  for (size_t i = 0; i < d.variant_names.size(); ++i) {
    o << (i ? ", " : " ") << i << "=" << d.variant_names[i];
  }
  o << "\n";
  if (!d.notes.empty()) o << d.notes;
  return o.str();
}

}  // namespace sloserve::mdp
