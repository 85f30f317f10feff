// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Crs validation and transpose_crs.
#include <weft/runtime/crs.hpp>

#include <doctest/doctest.h>

#include "../test_support.hpp"

#include <stdexcept>
#include <string>

using weft::test::invalid_argument_message;

TEST_CASE("Crs.transpose_reverses_every_edge") {
  weft::Crs<int> dag;  // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3
  dag.row_map = {0, 2, 3, 4, 4};
  dag.entries = {1, 2, 3, 3};
  weft::Crs<int> preds;
  weft::transpose_crs(preds, dag);
  CHECK(preds.num_rows() == 4);
  CHECK(preds.row_map == std::vector<int>{0, 0, 1, 2, 4});
  CHECK(preds.entries == std::vector<int>{0, 0, 1, 2});
  weft::Crs<int> back;
  weft::transpose_crs(back, preds);
  CHECK(back.row_map == dag.row_map);
  CHECK(back.entries == dag.entries);
}

TEST_CASE("Crs.transpose_of_empty_graph") {
  weft::Crs<long> none;
  weft::Crs<long> out;
  weft::transpose_crs(out, none);
  CHECK(out.num_rows() == 0);
  none.row_map = {0};
  weft::transpose_crs(out, none);
  CHECK(out.row_map == std::vector<long>{0});
}

TEST_CASE("Crs.malformed_input_is_named") {
  weft::Crs<int> g;
  g.row_map = {1, 1};
  CHECK(invalid_argument_message([&] { weft::validate_crs(g); }).find("row_map[0] must be 0") !=
        std::string::npos);

  g.row_map = {0, 2, 1};
  g.entries = {0};
  CHECK(invalid_argument_message([&] { weft::validate_crs(g); }).find("not monotone") != std::string::npos);

  g.row_map = {0, 1, 2};
  g.entries = {1};
  CHECK(invalid_argument_message([&] { weft::validate_crs(g); }).find("sizes disagree") != std::string::npos);

  g.row_map = {0, 1, 1};
  g.entries = {7};
  const std::string msg = invalid_argument_message([&] { weft::validate_crs(g, "WorkGraphPolicy"); });
  CHECK(msg.find("WorkGraphPolicy") == 0);
  CHECK(msg.find("is 7, outside [0, 2)") != std::string::npos);

  g.row_map.clear();
  g.entries = {0};
  CHECK(invalid_argument_message([&] { weft::validate_crs(g); }).find("row_map is empty") !=
        std::string::npos);
}
