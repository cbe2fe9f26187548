#include "runtime/state/shared_state_file.h"

#include <fstream>
#include <vector>
#include <xxhash.h>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {

std::pair<uint64_t, uint64_t> SizeAndChecksumOf(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(fmt::format("{} is missing or not a regular file", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(fmt::format("cannot read {}", path.string()));
  }
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) {
    throw std::bad_alloc();
  }
  XXH3_64bits_reset(state);
  std::vector<char> buffer(size_t{1} << 20);
  uint64_t size = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<size_t>(in.gcount());
    XXH3_64bits_update(state, buffer.data(), got);
    size += got;
  }
  const bool failed = in.bad();
  const uint64_t sum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (failed) {
    throw Error(fmt::format("cannot read {}", path.string()));
  }
  return {size, sum};
}

}  // namespace tidemark
