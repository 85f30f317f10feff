// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/backends/cuda_streams.hpp>

#include <map>
#include <memory>
#include <mutex>

namespace weft {

DeviceStreams& shared_device_streams(int device) {
  // Kept until the process ends: graphs made and run at any time share them,
  // and destroying streams after CUDA's own teardown is harmless (the
  // failures are ignored).
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<DeviceStreams>> streams;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<DeviceStreams>& slot = streams[device];
  if (!slot) {
    try {
      slot = std::make_unique<DeviceStreams>(device);
    } catch (...) {
      streams.erase(device);  // a later call tries again and reports again
      throw;
    }
  }
  return *slot;
}

}  // namespace weft
