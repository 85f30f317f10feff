// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A polymorphic-layout cell for the views tests: two components of
// different sizes, so the strided layout's arrays differ in element size.
//
//   weft::Tensor<TwoComponentCell<weft::StridedView>, 3> t(...);
//   t(i, j, k).value() = 1.5;  t(i, j, k).tag() = 7;
#pragma once

#include <cstdint>

#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/storage_descriptor.hpp>

template <class Layout>
struct TwoComponentCell : weft::PolymorphicLayout<TwoComponentCell<Layout>> {
  using Storage = typename weft::StorageDescriptor<Layout, double, std::int32_t>::Storage;
  auto value() -> double& { return storage.template get<0>(); }
  auto tag() -> std::int32_t& { return storage.template get<1>(); }
  Storage storage;
};
