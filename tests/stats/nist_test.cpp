// OLS against the certified values of the NIST StRD linear regression datasets Norris and
// Longley (tests/data/nist/). The data and certified values are transcribed from NIST's files.

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness/stats/ols.h"

namespace kvbench::stats {
namespace {

struct NistDataset {
  std::string first_line;
  std::map<std::string, std::pair<double, double>> certified;  // name -> (value, SD or NaN)
  std::vector<std::vector<double>> rows;                       // y first, then x1..xk
};

NistDataset load(const std::string& file) {
  std::ifstream in(std::string(KVBENCH_TEST_DATA) + "/nist/" + file);
  EXPECT_TRUE(in.good()) << file;
  NistDataset out;
  std::string line;
  while (std::getline(in, line)) {
    if (out.first_line.empty()) {
      out.first_line = line;
    }
    std::istringstream fields(line);
    std::string head;
    fields >> head;
    if (head.empty() || head[0] == '#' || head == "columns") {
      continue;
    }
    if (head == "certified") {
      std::string name;
      double value = 0.0;
      double sd = std::nan("");
      fields >> name >> value;
      fields >> sd;
      out.certified[name] = {value, sd};
      continue;
    }
    std::vector<double> row{std::stod(head)};
    for (double v = 0.0; fields >> v;) {
      row.push_back(v);
    }
    out.rows.push_back(row);
  }
  return out;
}

OlsFit fit_dataset(const NistDataset& data) {
  const auto n = static_cast<Eigen::Index>(data.rows.size());
  const auto k = static_cast<Eigen::Index>(data.rows.front().size() - 1);
  Eigen::MatrixXd x(n, k + 1);
  Eigen::VectorXd y(n);
  std::vector<std::string> names{"B0"};
  for (Eigen::Index j = 1; j <= k; ++j) {
    names.push_back(std::string("B").append(std::to_string(j)));
  }
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& row = data.rows[static_cast<std::size_t>(i)];
    y(i) = row[0];
    x(i, 0) = 1.0;
    for (Eigen::Index j = 1; j <= k; ++j) {
      x(i, j) = row[static_cast<std::size_t>(j)];
    }
  }
  return fit_ols(x, y, names);
}

double relative_error(double got, double want) {
  return std::abs(got - want) / std::abs(want);
}

void expect_certified(const NistDataset& data, const OlsFit& fit, double tol) {
  for (const Coefficient& c : fit.coefficients) {
    const auto& [value, sd] = data.certified.at(c.name);
    EXPECT_LT(relative_error(c.estimate, value), tol) << c.name << " = " << c.estimate;
    EXPECT_LT(relative_error(c.se, sd), tol) << "SE(" << c.name << ") = " << c.se;
  }
  EXPECT_LT(relative_error(fit.residual_se, data.certified.at("residual_sd").first), tol);
  EXPECT_LT(relative_error(fit.r_squared, data.certified.at("r_squared").first), tol);
  EXPECT_LT(relative_error(fit.rss, data.certified.at("residual_ss").first), tol);
  EXPECT_LT(relative_error(fit.tss - fit.rss, data.certified.at("regression_ss").first), tol);
  EXPECT_LT(relative_error(fit.f_statistic, data.certified.at("f_statistic").first), tol);
}

TEST(NistStrd, NorrisMatchesCertifiedValues) {
  const NistDataset data = load("norris.txt");
  EXPECT_NE(data.first_line.find("NIST Statistical Reference Datasets"), std::string::npos);
  ASSERT_EQ(data.rows.size(), 36U);
  ASSERT_EQ(data.certified.size(), 7U);
  const OlsFit fit = fit_dataset(data);
  EXPECT_EQ(fit.df, 34.0);
  expect_certified(data, fit, 1e-12);
}

TEST(NistStrd, LongleyMatchesCertifiedValues) {
  const NistDataset data = load("longley.txt");
  EXPECT_NE(data.first_line.find("Higher Level of Difficulty"), std::string::npos);
  ASSERT_EQ(data.rows.size(), 16U);
  ASSERT_EQ(data.certified.size(), 12U);
  const OlsFit fit = fit_dataset(data);
  EXPECT_EQ(fit.df, 9.0);
  expect_certified(data, fit, 1e-10);
}

TEST(NistStrd, LongleyVarianceInflationFactors) {
  // Longley's VIFs as published for R's longley data (car::vif); VIF does not depend on units.
  const OlsFit fit = fit_dataset(load("longley.txt"));
  const double expected[6] = {135.532438, 1788.513483, 33.618891, 3.588930, 399.151022, 758.980597};
  EXPECT_TRUE(std::isnan(fit.coefficients[0].vif));
  for (std::size_t j = 0; j < 6; ++j) {
    EXPECT_NEAR(fit.coefficients[j + 1].vif / expected[j], 1.0, 1e-6) << "x" << j + 1;
  }
}

}  // namespace
}  // namespace kvbench::stats
