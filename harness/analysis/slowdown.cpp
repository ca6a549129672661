#include "harness/analysis/slowdown.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::analysis {

using nlohmann::json;

namespace {

constexpr const char* kPrompt = "prompt_ktokens";
constexpr const char* kPromptSquared = "prompt_ktokens^2";
constexpr const char* kLogClock = "log_cpu_clock";
constexpr double kClockBicMargin = 2.0;  // "positive" evidence on Kass and Raftery's scale
constexpr int kMaxTimeDegree = 3;
constexpr double kQuadraticAlpha = 0.05;  // an L² term for decode rates earns its place below

struct Shape {
  Eigen::MatrixXd x;
  std::vector<std::string> names;
};

// X with an L² column after the numeric columns.
Shape with_square(const Shape& s, Eigen::Index prompt_column, Eigen::Index numeric_end) {
  Shape out;
  out.x.resize(s.x.rows(), s.x.cols() + 1);
  out.x.leftCols(numeric_end) = s.x.leftCols(numeric_end);
  out.x.col(numeric_end) = s.x.col(prompt_column).array().square().matrix();
  out.x.rightCols(s.x.cols() - numeric_end) = s.x.rightCols(s.x.cols() - numeric_end);
  out.names = s.names;
  out.names.insert(out.names.begin() + numeric_end, kPromptSquared);
  return out;
}

stats::DriftFit fit_at_degree(const Shape& s, const Eigen::VectorXd& t, const Eigen::VectorXd& y,
                              int degree) {
  return stats::fit_drift(s.x, s.names, stats::time_basis(t, degree),
                          stats::time_basis_names(degree), y);
}

Eigen::VectorXd unit(const stats::DriftFit& f, Eigen::Index k) {
  Eigen::VectorXd a = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(f.fit.p));
  a(k) = 1.0;
  return a;
}

std::string tokens(double ktokens) {
  return fmt::format("{:.0f}", 1000 * ktokens);
}

void add_effects(SlowdownModel& m, const std::vector<stats::DummyCoding>& dummies, double lmin,
                 double lmax) {
  const auto& f = m.fit;
  for (std::size_t k = 1; k < f.shape_names.size(); ++k) {
    const std::string& name = f.shape_names[k];
    if (name == kPromptSquared) {
      continue;
    }
    Eigen::VectorXd a = unit(f, static_cast<Eigen::Index>(k));
    std::string what;
    if (name == kPrompt && m.quadratic) {
      a(f.shape_index(kPromptSquared)) = lmin + lmax;
      what = fmt::format("per 1,000 prompt tokens, average over {}-{} tokens", tokens(lmin),
                         tokens(lmax));
    } else if (name == kPrompt) {
      what = "per 1,000 prompt tokens";
    } else if (name == "num_ctx_k") {
      what = "per 1,000 tokens of num_ctx";
    } else {
      what = "for " + name;
      for (const auto& d : dummies) {
        if (name.starts_with(d.factor + "=")) {
          what = fmt::format("{} against {}", name, d.reference);
        }
      }
    }
    const auto c = f.combination(a);
    m.effects.push_back({name, what, c.estimate, c.se, c.ci});
  }
}

PrefillShape prefill_shape(const stats::DriftFit& f, double lmin, double lmax) {
  PrefillShape p;
  const auto b = f.shape_index(kPrompt);
  const auto c = f.shape_index(kPromptSquared);
  p.linear = f.fit.coefficients[static_cast<std::size_t>(b)];
  p.quadratic = f.fit.coefficients[static_cast<std::size_t>(c)];
  for (const double l : {lmin, lmax}) {
    Eigen::VectorXd a = unit(f, b);
    a(c) = 2 * l;
    const auto cost = f.combination(a);
    p.marginal.push_back({static_cast<int>(std::lround(1000 * l)), cost.estimate, cost.ci});
  }
  if (p.linear.estimate > 0 && p.quadratic.estimate > 0) {
    p.crossover_tokens = 1000 * p.linear.estimate / p.quadratic.estimate;
  }
  return p;
}

// One indicator column per distinct condition (the factor values of a row).
Shape cell_means(std::span<const stats::ModelRow> rows, std::size_t& cells, bool& replicated) {
  std::map<std::pair<std::vector<double>, std::vector<std::string>>, Eigen::Index> index;
  std::vector<Eigen::Index> of(rows.size());
  std::map<Eigen::Index, int> count;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto key = std::make_pair(rows[i].numeric, rows[i].categorical);
    const auto [it, added] = index.emplace(key, static_cast<Eigen::Index>(index.size()));
    of[i] = it->second;
    ++count[it->second];
  }
  cells = index.size();
  replicated = std::any_of(count.begin(), count.end(), [](const auto& c) { return c.second > 1; });
  Shape s;
  s.x = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()),
                              static_cast<Eigen::Index>(cells));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    s.x(static_cast<Eigen::Index>(i), of[i]) = 1.0;
  }
  for (std::size_t c = 0; c < cells; ++c) {
    s.names.push_back(fmt::format("condition{}", c));
  }
  return s;
}

void judge_noise(SlowdownModel& m, std::span<const stats::ModelRow> rows, const Eigen::VectorXd& t,
                 const Eigen::VectorXd& y) {
  const int degree = static_cast<int>(m.fit.time_names.size());
  bool replicated = false;
  const Shape cells = cell_means(rows, m.cells, replicated);
  m.durbin_watson = m.fit.fit.durbin_watson;
  const auto n = static_cast<std::size_t>(y.size());
  if (!replicated || n <= m.cells + static_cast<std::size_t>(degree) + 1) {
    m.note =
        "no condition was repeated often enough for pure error: the spread is the shape "
        "model's";
    return;
  }
  try {
    m.saturated = fit_at_degree(cells, t, y, degree);
  } catch (const Error& e) {
    m.note = fmt::format("no saturated model ({}): the spread is the shape model's", e.what());
    return;
  }
  m.pure_error = m.saturated->relative_residual_sd;
  m.durbin_watson = m.saturated->fit.durbin_watson;
  if (*m.durbin_watson < 1.0 && n > m.cells + static_cast<std::size_t>(degree) + 2) {
    try {
      m.durbin_watson_smoother = fit_at_degree(cells, t, y, degree + 1).fit.durbin_watson;
    } catch (const Error&) {
      // No smoother refit: the rule judges the one it has.
    }
  }
  m.lack_of_fit = stats::nested_f_test(m.fit, *m.saturated);
}

void fit_clock(SlowdownModel& m, const Shape& shape, const Eigen::VectorXd& t,
               const Eigen::VectorXd& y, std::span<const double> clock_mhz,
               const std::vector<stats::DummyCoding>& dummies, double lmin, double lmax) {
  const auto n = static_cast<std::size_t>(y.size());
  if (clock_mhz.size() != n) {
    m.clock_note =
        fmt::format("no clock covariate: {} clock readings for {} calls", clock_mhz.size(), n);
    return;
  }
  const auto [lo, hi] = std::minmax_element(clock_mhz.begin(), clock_mhz.end());
  if (!(*lo > 0.0) || !std::isfinite(*hi)) {
    m.clock_note = "a CPU clock reading was not a positive number: no clock covariate";
    return;
  }
  if (*hi / *lo < 1.01) {
    m.clock_note = fmt::format(
        "the CPU clock stayed within 1 % ({:.0f}-{:.0f} MHz): nothing to take out with it", *lo,
        *hi);
    return;
  }
  Eigen::Index first = 0;
  t.minCoeff(&first);
  const double reference = clock_mhz[static_cast<std::size_t>(first)];
  const int degree = static_cast<int>(m.fit.time_names.size());
  Eigen::MatrixXd basis(y.size(), degree + 1);
  basis.leftCols(degree) = stats::time_basis(t, degree);
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    basis(i, degree) = std::log(clock_mhz[static_cast<std::size_t>(i)] / reference);
  }
  auto names = stats::time_basis_names(degree);
  names.emplace_back(kLogClock);
  try {
    ClockCovariate c;
    c.fit = stats::fit_drift(shape.x, shape.names, basis, names, y);
    c.elasticity = c.fit.fit.coefficient(kLogClock);
    SlowdownModel read;
    read.fit = c.fit;
    read.quadratic = m.quadratic;
    add_effects(read, dummies, lmin, lmax);
    c.effects = std::move(read.effects);
    c.clock_min_mhz = *lo;
    c.clock_max_mhz = *hi;
    c.bic_time_only = m.fit.bic;
    c.preferred = c.fit.bic <= m.fit.bic - kClockBicMargin;
    m.clock = std::move(c);
  } catch (const Error& e) {
    m.clock_note = fmt::format("no clock covariate: {}", e.what());
  }
}

}  // namespace

bool is_prefill_metric(const std::string& metric) {
  return metric == "ttft_ms" || metric == "server_prompt_ms";
}

SlowdownModel fit_slowdown(const std::string& metric, const stats::ModelSpec& spec,
                           std::span<const stats::ModelRow> rows,
                           std::span<const double> clock_mhz) {
  stats::ModelSpec shape_spec = spec;
  shape_spec.time_term = false;
  shape_spec.time_squared = false;
  const stats::Design design = stats::build_design(shape_spec, rows, false);
  const Eigen::Index n = design.y.rows();
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    t(i) = rows[static_cast<std::size_t>(i)].elapsed_min;
  }
  const Eigen::VectorXd& y = design.y;
  const Shape linear{design.x, design.names};
  SlowdownModel m;
  m.metric = metric;
  const auto p = std::find(spec.numeric.begin(), spec.numeric.end(), kPrompt);
  std::set<double> lengths;
  double lmin = 0;
  double lmax = 0;
  if (p != spec.numeric.end()) {
    const auto k = static_cast<std::size_t>(p - spec.numeric.begin());
    for (const auto& r : rows) {
      lengths.insert(r.numeric[k]);
    }
    lmin = *lengths.begin();
    lmax = *lengths.rbegin();
  }
  const bool curvature_possible = lengths.size() >= 3;
  const auto prompt_column = 1 + (p - spec.numeric.begin());
  const auto numeric_end = 1 + static_cast<Eigen::Index>(spec.numeric.size());
  if (curvature_possible) {
    const Shape square = with_square(linear, prompt_column, numeric_end);
    if (is_prefill_metric(metric)) {
      m.fit = stats::fit_drift_smooth(square.x, square.names, t, y, kMaxTimeDegree, &m.bics);
      m.quadratic = true;
      const int degree = static_cast<int>(m.fit.time_names.size());
      m.quadratic_test = stats::nested_f_test(fit_at_degree(linear, t, y, degree), m.fit);
    } else {
      m.fit = stats::fit_drift_smooth(linear.x, linear.names, t, y, kMaxTimeDegree, &m.bics);
      const int degree = static_cast<int>(m.fit.time_names.size());
      auto q = fit_at_degree(square, t, y, degree);
      m.quadratic_test = stats::nested_f_test(m.fit, q);
      if (m.quadratic_test && m.quadratic_test->p < kQuadraticAlpha) {
        m.fit = std::move(q);
        m.quadratic = true;
      }
    }
  } else {
    m.fit = stats::fit_drift_smooth(linear.x, linear.names, t, y, kMaxTimeDegree, &m.bics);
  }
  add_effects(m, design.dummies, lmin, lmax);
  if (m.quadratic) {
    m.prefill = prefill_shape(m.fit, lmin, lmax);
  }
  m.t_end_min = t.maxCoeff();
  m.slow_down_end = m.fit.slow_down(m.t_end_min);
  m.slow_down_end_ci = m.fit.slow_down_ci(m.t_end_min);
  judge_noise(m, rows, t, y);
  if (!clock_mhz.empty()) {
    const Shape shape = m.quadratic ? with_square(linear, prompt_column, numeric_end) : linear;
    fit_clock(m, shape, t, y, clock_mhz, design.dummies, lmin, lmax);
  }
  return m;
}

namespace {

json interval(const stats::Interval& i) {
  return json::array({i.lower, i.upper});
}

json effects_json(const std::vector<HeadlineEffect>& effects) {
  json out = json::array();
  for (const auto& e : effects) {
    out.push_back({{"term", e.term},
                   {"what", e.what},
                   {"estimate", e.estimate},
                   {"se", e.se},
                   {"ci", interval(e.ci)}});
  }
  return out;
}

}  // namespace

void to_json(json& j, const SlowdownModel& m) {
  j = {{"metric", m.metric},
       {"model", "metric = shape x g(t), log g polynomial in minutes, weights 1/fitted²"},
       {"fit", m.fit},
       {"quadratic", m.quadratic},
       {"time_degree", m.fit.time_names.size()},
       {"bic_by_time_degree", m.bics},
       {"effects", effects_json(m.effects)},
       {"t_end_min", m.t_end_min},
       {"slow_down_end", m.slow_down_end},
       {"slow_down_end_ci", interval(m.slow_down_end_ci)},
       {"conditions", m.cells}};
  if (m.quadratic_test) {
    j["quadratic_test"] = *m.quadratic_test;
  }
  if (m.prefill) {
    json marginal = json::array();
    for (const auto& c : m.prefill->marginal) {
      marginal.push_back(
          {{"prompt_tokens", c.prompt_tokens}, {"estimate", c.estimate}, {"ci", interval(c.ci)}});
    }
    j["prefill"] = {{"linear", m.prefill->linear.estimate},
                    {"linear_ci", interval(m.prefill->linear.ci)},
                    {"quadratic", m.prefill->quadratic.estimate},
                    {"quadratic_ci", interval(m.prefill->quadratic.ci)},
                    {"marginal_per_1000_tokens", marginal}};
    if (m.prefill->crossover_tokens) {
      j["prefill"]["crossover_tokens"] = *m.prefill->crossover_tokens;
    }
  }
  if (m.saturated) {
    j["saturated"] = *m.saturated;
  }
  if (m.pure_error) {
    j["pure_error"] = *m.pure_error;
  }
  if (m.durbin_watson) {
    j["durbin_watson"] = *m.durbin_watson;
  }
  if (m.durbin_watson_smoother) {
    j["durbin_watson_smoother"] = *m.durbin_watson_smoother;
  }
  if (m.lack_of_fit) {
    j["lack_of_fit"] = *m.lack_of_fit;
  }
  if (!m.note.empty()) {
    j["note"] = m.note;
  }
  if (m.clock) {
    const auto& c = *m.clock;
    j["clock_covariate"] = {{"model",
                             "log g = polynomial in minutes + c * log(clock / clock at "
                             "the first call)"},
                            {"elasticity", c.elasticity.estimate},
                            {"elasticity_ci", interval(c.elasticity.ci)},
                            {"clock_mhz", json::array({c.clock_min_mhz, c.clock_max_mhz})},
                            {"bic", c.fit.bic},
                            {"bic_time_only", c.bic_time_only},
                            {"preferred", c.preferred},
                            {"effects", effects_json(c.effects)},
                            {"fit", c.fit}};
  }
  if (!m.clock_note.empty()) {
    j["clock_note"] = m.clock_note;
  }
}

}  // namespace kvbench::analysis
