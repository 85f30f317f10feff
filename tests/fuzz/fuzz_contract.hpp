// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What every weft fuzz target checks: a reader given arbitrary bytes either
// accepts them (and the target checks what it made) or refuses them with
// std::invalid_argument. Any other exception is a finding, reported with its
// type and message; so is whatever check_accepted() reports.
#pragma once

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>
#include <typeinfo>

namespace weft::fuzz {

[[noreturn]] inline void finding(const char* target, const char* what, const char* detail) {
  std::fprintf(stderr, "%s: %s: %s\n", target, what, detail);
  std::abort();
}

// Runs read_and_check(); an exception other than std::invalid_argument is a finding.
template <class ReadAndCheck>
void expect_accepted_or_refused(const char* target, ReadAndCheck&& read_and_check) {
  try {
    read_and_check();
  } catch (const std::invalid_argument&) {
    // refused, as documented
  } catch (const std::exception& e) {
    int status = 0;  // an exception the contract does not allow: name its type
    std::unique_ptr<char, void (*)(void*)> type(
        abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status), std::free);
    finding(target, type ? type.get() : typeid(e).name(), e.what());
  }
}

}  // namespace weft::fuzz
