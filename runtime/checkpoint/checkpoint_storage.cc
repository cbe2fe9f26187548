#include "runtime/checkpoint/checkpoint_storage.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <system_error>
#include <type_traits>
#include <unistd.h>
#include <xxhash.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "config/job_spec.h"
#include "config/regular_file.h"
#include "runtime/core/durable_file.h"
#include "runtime/core/errors.h"
#include "runtime/core/logging.h"

namespace tidemark {
namespace {

constexpr std::string_view kMagic = "TMSTATE1";
constexpr size_t kHeaderBytes = 8 + 8 + 8;
constexpr const char* kMetadata = "_metadata";
constexpr size_t kChunkBytes = size_t{1} << 20;           // verification reads this much at a time
constexpr int64_t kMaxMetadataBytes = int64_t{64} << 20;  // _metadata is JSON listing the files

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

uint64_t GetU64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | static_cast<uint8_t>(in[static_cast<size_t>(i)]);
  }
  return v;
}

/// The whole of `_metadata` (a regular file only, never blocking on a FIFO); nullopt when it
/// does not exist; throws std::runtime_error naming it otherwise.
std::optional<std::string> ReadMetadata(const std::filesystem::path& path) {
  std::string error;
  std::optional<std::string> text = ReadRegularFile(path.string(), kMaxMetadataBytes, &error);
  if (!text && error == std::generic_category().message(ENOENT)) {
    return std::nullopt;
  }
  if (!text) {
    throw std::runtime_error(fmt::format("{}: {}", path.filename().string(), error));
  }
  return text;
}

/// Verifies one state file as it streams by, in chunks of kChunkBytes (bounded memory whatever its
/// size): the header's magic and length, the body's length and XXH3-64. `body` (optional) gets
/// the body. Throws std::runtime_error naming `file`.
void VerifyStateFile(const std::filesystem::path& path, const std::string& file, uint64_t size,
                     const std::string& want, std::string* body) {
  std::string error;
  const int fd = OpenRegularFile(path.string(), &error);
  if (fd < 0) {
    if (error == std::generic_category().message(ENOENT)) {
      throw std::runtime_error(fmt::format("state file {} is missing", file));
    }
    throw std::runtime_error(fmt::format("state file {}: {}", file, error));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != kHeaderBytes + size) {
    throw std::runtime_error(fmt::format("state file {} is truncated or not a state file", file));
  }
  std::vector<char> buffer(kChunkBytes);
  auto read_some = [&](char* at, size_t n) -> size_t {
    for (;;) {
      const ssize_t got = ::read(fd, at, n);
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got < 0) {
        throw std::runtime_error(
            fmt::format("state file {}: {}", file, std::generic_category().message(errno)));
      }
      return static_cast<size_t>(got);
    }
  };
  char header[kHeaderBytes];
  size_t have = 0;
  while (have < kHeaderBytes) {
    const size_t got = read_some(header + have, kHeaderBytes - have);
    if (got == 0) {
      break;
    }
    have += got;
  }
  const std::string_view h(header, have);
  if (have < kHeaderBytes || h.substr(0, 8) != kMagic || GetU64(h.substr(16, 8)) != size) {
    throw std::runtime_error(fmt::format("state file {} is truncated or not a state file", file));
  }
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) {
    throw std::bad_alloc();
  }
  struct StateFree {
    XXH3_state_t* s;
    ~StateFree() { XXH3_freeState(s); }
  } state_free{state};
  XXH3_64bits_reset(state);
  if (body != nullptr) {
    body->clear();
    body->reserve(size);
  }
  uint64_t total = 0;
  for (;;) {
    const size_t got = read_some(buffer.data(), buffer.size());
    if (got == 0) {
      break;
    }
    total += got;
    if (total > size) {
      throw std::runtime_error(fmt::format("state file {} is truncated or not a state file", file));
    }
    XXH3_64bits_update(state, buffer.data(), got);
    if (body != nullptr) {
      body->append(buffer.data(), got);
    }
  }
  if (total != size) {
    throw std::runtime_error(fmt::format("state file {} is truncated or not a state file", file));
  }
  const uint64_t sum = XXH3_64bits_digest(state);
  if (fmt::format("{:016x}", sum) != want || GetU64(h.substr(8, 8)) != sum) {
    throw std::runtime_error(fmt::format("state file {} fails its checksum", file));
  }
}

std::optional<int64_t> CheckpointIdOf(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  if (name.rfind("chk-", 0) != 0 || name.size() == 4 || name.size() > 4 + 18) {
    return std::nullopt;
  }
  int64_t id = 0;
  for (size_t i = 4; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') {
      return std::nullopt;
    }
    id = id * 10 + (name[i] - '0');
  }
  return id;
}

nlohmann::json BlocksToJson(const std::vector<StateBlock>& blocks) {
  nlohmann::json out = nlohmann::json::array();
  for (const StateBlock& b : blocks) {
    nlohmann::json j = {{"kind", b.kind == StateBlock::Kind::kKeyGroups ? "key-groups" : "list"},
                        {"begin", b.begin},
                        {"end", b.end},
                        {"enclosing", b.enclosing}};
    if (b.kind == StateBlock::Kind::kList) {
      j["elements"] = b.elements;
    }
    out.push_back(std::move(j));
  }
  return out;
}

/// The blocks of a state file of `size` body bytes, checked to lie inside it in order (a
/// restore cuts the body at these offsets). Throws std::runtime_error naming `file`.
std::vector<StateBlock> BlocksFromJson(const nlohmann::json& j, uint64_t size,
                                       const std::string& file) {
  auto bad = [&](const std::string& why) {
    return std::runtime_error(fmt::format("_metadata blocks of {}: {}", file, why));
  };
  if (!j.is_array()) {
    throw bad("not an array");
  }
  auto offsets = [&](const nlohmann::json& o, const char* name) {
    std::vector<uint64_t> v;
    const auto it = o.find(name);
    if (it == o.end()) {
      return v;
    }
    if (!it->is_array()) {
      throw bad(fmt::format("{} is not an array", name));
    }
    for (const auto& x : *it) {
      if (!x.is_number_unsigned()) {
        throw bad(fmt::format("{} holds a value that is not an offset", name));
      }
      v.push_back(x.get<uint64_t>());
    }
    return v;
  };
  std::vector<StateBlock> blocks;
  uint64_t last_end = 0;
  for (const auto& o : j) {
    if (!o.is_object() || !o.contains("kind") || !o["kind"].is_string() || !o.contains("begin") ||
        !o["begin"].is_number_unsigned() || !o.contains("end") || !o["end"].is_number_unsigned()) {
      throw bad("a block needs kind, begin and end");
    }
    StateBlock b;
    const std::string kind = o["kind"].get<std::string>();
    if (kind == "key-groups") {
      b.kind = StateBlock::Kind::kKeyGroups;
    } else if (kind == "list") {
      b.kind = StateBlock::Kind::kList;
    } else {
      throw bad(fmt::format("unknown kind \"{}\"", kind));
    }
    b.begin = o["begin"].get<uint64_t>();
    b.end = o["end"].get<uint64_t>();
    b.elements = offsets(o, "elements");
    b.enclosing = offsets(o, "enclosing");
    if (b.begin < last_end || b.end > size || b.end < b.begin + 4) {
      throw bad(
          fmt::format("block [{}, {}) out of order or outside the {} bytes", b.begin, b.end, size));
    }
    uint64_t prev = b.begin + 4;
    for (uint64_t e : b.elements) {
      if (e < prev || e > b.end) {
        throw bad("list elements out of order");
      }
      prev = e;
    }
    for (uint64_t e : b.enclosing) {
      if (e + 8 > b.begin) {
        throw bad("an enclosing section after its block");
      }
    }
    last_end = b.end;
    blocks.push_back(std::move(b));
  }
  return blocks;
}

/// A shared file's path as `_metadata` names it, checked to stay inside `shared/`.
bool IsSharedPath(const std::string& path) {
  return path.rfind("shared/", 0) == 0 && path.size() > 7 &&
         path.find('/', 7) == std::string::npos && path.find("..") == std::string::npos;
}

/// The shared files the checkpoint in `chk` references (its `_metadata`'s "shared" entries);
/// nullopt when `_metadata` cannot be read.
std::optional<std::set<std::string>> SharedFilesOf(const std::filesystem::path& chk) {
  try {
    std::optional<std::string> text = ReadMetadata(chk / kMetadata);
    if (!text) {
      return std::nullopt;
    }
    const nlohmann::json meta = nlohmann::json::parse(*text, nullptr, false);
    if (meta.is_discarded() || !meta.is_object() || !meta.contains("states") ||
        !meta["states"].is_array()) {
      return std::nullopt;
    }
    std::set<std::string> files;
    for (const auto& s : meta["states"]) {
      if (!s.is_object() || !s.contains("shared")) {
        continue;
      }
      for (const auto& f : s["shared"]) {
        if (!f.is_object() || !f.contains("file") || !f["file"].is_string() ||
            !IsSharedPath(f["file"].get<std::string>())) {
          return std::nullopt;
        }
        files.insert(f["file"].get<std::string>());
      }
    }
    return files;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

CheckpointStorage::CheckpointStorage(std::filesystem::path dir, std::string job_name,
                                     int num_retained)
    : dir_(std::move(dir)),
      job_name_(std::move(job_name)),
      num_retained_(std::max(1, num_retained)) {}

std::filesystem::path CheckpointStorage::CheckpointDir(int64_t id) const {
  {
    MutexLock lock(savepoints_mu_);
    if (auto it = savepoint_dirs_.find(id); it != savepoint_dirs_.end()) {
      return it->second;
    }
  }
  return dir_ / fmt::format("chk-{}", id);
}

StateFileHandle CheckpointStorage::WriteState(int64_t id, const std::string& operator_id,
                                              int subtask, std::string_view bytes,
                                              std::vector<StateBlock> blocks,
                                              std::vector<SharedStateFile> shared) const {
  const std::filesystem::path chk = CheckpointDir(id);
  std::error_code ec;
  std::filesystem::create_directories(chk, ec);
  if (ec) {
    throw Error(fmt::format("cannot create {}: {}", chk.string(), ec.message()));
  }
  StateFileHandle h;
  h.operator_id = operator_id;
  h.subtask = subtask;
  // Named by a hash of the id: operator ids may hold any character; the metadata keeps the id.
  h.file = fmt::format("op-{:016x}-{}.state", XXH3_64bits(operator_id.data(), operator_id.size()),
                       subtask);
  h.size = bytes.size();
  h.checksum = XXH3_64bits(bytes.data(), bytes.size());
  h.blocks = std::move(blocks);
  h.shared = std::move(shared);
  std::string data;
  data.reserve(kHeaderBytes + bytes.size());
  data.append(kMagic);
  PutU64(data, h.checksum);
  PutU64(data, h.size);
  data.append(bytes);
  WriteFileSynced(chk / h.file, data);
  return h;
}

void CheckpointStorage::Finalize(int64_t id, int64_t timestamp_ms,
                                 const std::vector<StateFileHandle>& states, bool drained) {
  const std::filesystem::path chk = CheckpointDir(id);
  std::error_code ec;
  std::filesystem::create_directories(chk, ec);
  if (ec) {
    throw Error(fmt::format("cannot create {}: {}", chk.string(), ec.message()));
  }
  nlohmann::json meta;
  meta["version"] = 1;
  meta["job"] = job_name_;
  meta["checkpoint_id"] = id;
  meta["timestamp_ms"] = timestamp_ms;
  if (drained) {
    meta["drained"] = true;
  }
  nlohmann::json files = nlohmann::json::array();
  for (const StateFileHandle& h : states) {
    nlohmann::json file = {{"operator", h.operator_id},
                           {"subtask", h.subtask},
                           {"file", h.file},
                           {"size", h.size},
                           {"xxh3", fmt::format("{:016x}", h.checksum)}};
    if (!h.blocks.empty()) {
      file["blocks"] = BlocksToJson(h.blocks);
    }
    if (!h.shared.empty()) {
      nlohmann::json shared = nlohmann::json::array();
      for (const SharedStateFile& f : h.shared) {
        shared.push_back(
            {{"file", f.path}, {"size", f.size}, {"xxh3", fmt::format("{:016x}", f.checksum)}});
      }
      file["shared"] = std::move(shared);
    }
    files.push_back(std::move(file));
  }
  meta["states"] = std::move(files);
  if (!parallelism_.empty()) {
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [op, p] : parallelism_) {
      ops[op] = {{"parallelism", p.parallelism}, {"max-parallelism", p.max_parallelism}};
    }
    meta["parallelism"] = std::move(ops);
  }
  if (!layouts_.empty()) {
    meta["operators"] = layouts_;
  }
  const std::filesystem::path tmp = chk / (std::string(kMetadata) + ".inprogress");
  WriteFileSynced(tmp, meta.dump() + "\n");
  std::filesystem::rename(tmp, chk / kMetadata, ec);
  if (ec) {
    throw Error(fmt::format("cannot complete checkpoint {}: {}", chk.string(), ec.message()));
  }
  SyncDirectory(chk);
  SyncDirectory(chk.parent_path());
  {
    MutexLock lock(savepoints_mu_);
    if (savepoint_dirs_.erase(id) > 0) {
      return;  // a savepoint belongs to the user: no retention, nothing of the checkpoints removed
    }
  }
  // Retention: keep the newest num_retained complete checkpoints; drop unfinished older ones.
  std::vector<int64_t> complete = CompletedIds();
  const size_t keep = static_cast<size_t>(num_retained_);
  const int64_t oldest_kept = complete.size() > keep ? complete[complete.size() - keep] : 0;
  // Reference counting of shared files (incremental checkpoints): what the retained
  // checkpoints reference stays; what only the deleted ones referenced goes, after them (a
  // crash in between leaves a file behind, never a checkpoint without its files). A retained
  // `_metadata` that cannot be read keeps every shared file this time.
  std::set<std::string> retained_shared;
  std::set<std::string> dropped_shared;
  bool shared_known = true;
  for (int64_t c : complete) {
    std::optional<std::set<std::string>> refs = SharedFilesOf(dir_ / fmt::format("chk-{}", c));
    if (c >= oldest_kept) {
      if (!refs) {
        shared_known = false;
      } else {
        retained_shared.insert(refs->begin(), refs->end());
      }
    } else if (refs) {
      dropped_shared.insert(refs->begin(), refs->end());
    }
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::optional<int64_t> other = CheckpointIdOf(entry.path());
    if (!other || *other == id) {
      continue;
    }
    const bool is_complete = std::binary_search(complete.begin(), complete.end(), *other);
    if ((is_complete && *other < oldest_kept) || (!is_complete && *other < id)) {
      std::filesystem::remove_all(entry.path(), ec);
    }
  }
  if (shared_known) {
    for (const std::string& file : dropped_shared) {
      if (retained_shared.count(file) == 0) {
        std::filesystem::remove(dir_ / file, ec);
      }
    }
  }
}

bool CheckpointStorage::IsSavepoint(int64_t id) const {
  MutexLock lock(savepoints_mu_);
  return savepoint_dirs_.count(id) > 0;
}

void CheckpointStorage::Discard(int64_t id) const {
  std::error_code ec;
  std::filesystem::remove_all(CheckpointDir(id), ec);
  MutexLock lock(savepoints_mu_);
  savepoint_dirs_.erase(id);
}

std::vector<int64_t> CheckpointStorage::CompletedIds() const {
  std::vector<int64_t> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (std::optional<int64_t> id = CheckpointIdOf(entry.path());
        id && std::filesystem::exists(entry.path() / kMetadata, ec)) {
      ids.push_back(*id);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

namespace {

/// `obj[key]` of a `_metadata` object named `where` ("_metadata", "_metadata states[2]"); a
/// missing key or a value of the wrong type throws std::runtime_error naming both, instead of
/// nlohmann's "[json.exception.out_of_range.403] key 'x' not found".
const nlohmann::json& MetadataMember(const nlohmann::json& obj, const std::string& where,
                                     const char* key) {
  if (!obj.is_object()) {
    throw std::runtime_error(fmt::format("{} is not an object", where));
  }
  const auto it = obj.find(key);
  if (it == obj.end()) {
    throw std::runtime_error(fmt::format("{} has no key \"{}\"", where, key));
  }
  return *it;
}

template <typename T>
T MetadataField(const nlohmann::json& obj, const std::string& where, const char* key) {
  const nlohmann::json& v = MetadataMember(obj, where, key);
  const bool ok = std::is_same_v<T, std::string> ? v.is_string()
                  : std::is_unsigned_v<T>        ? v.is_number_unsigned()
                                                 : v.is_number_integer();
  if (!ok) {
    throw std::runtime_error(fmt::format("{} key \"{}\" is not {}, got {}", where, key,
                                         std::is_same_v<T, std::string> ? "a string"
                                         : std::is_unsigned_v<T>        ? "a non-negative integer"
                                                                        : "an integer",
                                         v.dump()));
  }
  return v.get<T>();
}

/// Reads and verifies the checkpoint in `chk`; throws std::runtime_error naming the problem.
/// `expected_id` (when set) must be the id its `_metadata` names.
CompletedCheckpoint ReadCheckpoint(const std::filesystem::path& chk,
                                   std::optional<int64_t> expected_id, bool load_states = true) {
  std::optional<std::string> meta_text = ReadMetadata(chk / kMetadata);
  if (!meta_text) {
    throw std::runtime_error("no _metadata (not completed)");
  }
  nlohmann::json meta = nlohmann::json::parse(*meta_text, nullptr, /*allow_exceptions=*/false);
  CompletedCheckpoint cp;
  if (meta.is_discarded() || !meta.is_object()) {
    throw std::runtime_error("_metadata is not valid JSON");
  }
  const std::string top = "_metadata";
  if (MetadataMember(meta, top, "version") != 1) {
    throw std::runtime_error(
        fmt::format("_metadata version {} is not supported", meta.at("version").dump()));
  }
  cp.id = MetadataField<int64_t>(meta, top, "checkpoint_id");
  cp.timestamp_ms = MetadataField<int64_t>(meta, top, "timestamp_ms");
  cp.job = MetadataField<std::string>(meta, top, "job");
  if (auto e = meta.find("drained"); e != meta.end()) {
    if (!e->is_boolean()) {
      throw std::runtime_error("_metadata drained is not a boolean");
    }
    cp.drained = e->get<bool>();
  }
  cp.directory = chk;
  if (auto ops = meta.find("operators"); ops != meta.end()) {
    if (!ops->is_object()) {
      throw std::runtime_error("_metadata operators is not an object");
    }
    for (const auto& [op, aspects] : ops->items()) {
      if (!aspects.is_object()) {
        throw std::runtime_error(fmt::format("_metadata operators.{} is not an object", op));
      }
      for (const auto& [aspect, text] : aspects.items()) {
        if (!text.is_string()) {
          throw std::runtime_error(
              fmt::format("_metadata operators.{}.{} is not a string", op, aspect));
        }
        cp.layouts[op][aspect] = text.get<std::string>();
      }
    }
  }
  if (auto ops = meta.find("parallelism"); ops != meta.end()) {
    if (!ops->is_object()) {
      throw std::runtime_error("_metadata parallelism is not an object");
    }
    for (const auto& [op, p] : ops->items()) {
      const auto par = p.is_object() ? p.find("parallelism") : p.end();
      const auto max = p.is_object() ? p.find("max-parallelism") : p.end();
      if (par == p.end() || max == p.end() || !par->is_number_integer() ||
          !max->is_number_integer() || par->get<int>() < 1 || max->get<int>() < 1) {
        throw std::runtime_error(fmt::format(
            "_metadata parallelism.{} needs positive integers parallelism and max-parallelism",
            op));
      }
      cp.parallelism[op] = OperatorParallelism{par->get<int>(), max->get<int>()};
    }
  }
  if (expected_id && cp.id != *expected_id) {
    throw std::runtime_error(fmt::format("_metadata names checkpoint {}", cp.id));
  }
  const nlohmann::json& states = MetadataMember(meta, top, "states");
  if (!states.is_array()) {
    throw std::runtime_error("_metadata key \"states\" is not an array");
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const nlohmann::json& s = states[i];
    const std::string where = fmt::format("_metadata states[{}]", i);
    const std::string file = MetadataField<std::string>(s, where, "file");
    if (file.find('/') != std::string::npos || file == ".." || file.empty()) {
      throw std::runtime_error(fmt::format("bad state file name \"{}\"", file));
    }
    const auto size = MetadataField<uint64_t>(s, where, "size");
    const auto want = MetadataField<std::string>(s, where, "xxh3");
    std::string body;
    VerifyStateFile(chk / file, file, size, want, load_states ? &body : nullptr);
    // Verification alone keeps the key with no bytes (bounded memory, whatever the size).
    const std::pair<std::string, int> key{MetadataField<std::string>(s, where, "operator"),
                                          MetadataField<int>(s, where, "subtask")};
    // Two entries for one subtask would restore one of them and drop the other, or (a source's
    // splits read from two positions) read input twice: no writer makes them.
    if (cp.states.contains(key)) {
      throw std::runtime_error(
          fmt::format("_metadata lists operator \"{}\" subtask {} twice", key.first, key.second));
    }
    if (auto b = s.find("blocks"); b != s.end()) {
      cp.blocks[key] = BlocksFromJson(*b, size, file);
    }
    if (auto shared = s.find("shared"); shared != s.end()) {
      // An incremental checkpoint's shared files, relative to the checkpoint root.
      std::vector<SharedStateFile>& out = cp.shared[key];
      if (!shared->is_array()) {
        throw std::runtime_error(fmt::format("{} key \"shared\" is not an array", where));
      }
      for (size_t k = 0; k < shared->size(); ++k) {
        const nlohmann::json& f = (*shared)[k];
        const std::string in = fmt::format("{}.shared[{}]", where, k);
        SharedStateFile sf;
        sf.path = MetadataField<std::string>(f, in, "file");
        sf.size = MetadataField<uint64_t>(f, in, "size");
        const auto sum = MetadataField<std::string>(f, in, "xxh3");
        if (!IsSharedPath(sf.path)) {
          throw std::runtime_error(fmt::format("bad shared file name \"{}\"", sf.path));
        }
        const std::filesystem::path path = chk.parent_path() / sf.path;
        std::pair<uint64_t, uint64_t> got;
        try {
          got = SizeAndChecksumOf(path);
        } catch (const std::exception&) {
          throw std::runtime_error(fmt::format("shared file {} is missing", sf.path));
        }
        if (got.first != sf.size || fmt::format("{:016x}", got.second) != sum) {
          throw std::runtime_error(
              fmt::format("shared file {} is truncated or fails its checksum", sf.path));
        }
        sf.checksum = got.second;
        out.push_back(std::move(sf));
      }
    }
    cp.states[key] = std::move(body);
  }
  return cp;
}

}  // namespace

std::optional<CompletedCheckpoint> CheckpointStorage::LoadLatest(std::vector<std::string>* skipped,
                                                                 bool load_states,
                                                                 int64_t min_id) const {
  std::vector<int64_t> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (std::optional<int64_t> id = CheckpointIdOf(entry.path()); id && *id >= min_id) {
      ids.push_back(*id);
    }
  }
  std::sort(ids.rbegin(), ids.rend());
  auto skip = [&](int64_t id, const std::string& why) {
    const std::string line =
        fmt::format("skipping checkpoint {}: {}", CheckpointDir(id).string(), why);
    GetLogger("checkpoint")->warn("{}", line);
    if (skipped != nullptr) {
      skipped->push_back(line);
    }
  };
  for (int64_t id : ids) {
    CompletedCheckpoint cp;
    try {
      cp = ReadCheckpoint(dir_ / fmt::format("chk-{}", id), id, load_states);
    } catch (const std::exception& e) {
      skip(id, e.what());
      continue;
    }
    if (cp.job != job_name_) {
      skip(id, fmt::format("written by job \"{}\", not \"{}\"", cp.job, job_name_));
      continue;
    }
    return cp;
  }
  return std::nullopt;
}

CompletedCheckpoint CheckpointStorage::Load(const std::filesystem::path& dir,
                                            const std::string& job_name,
                                            std::vector<std::string>* skipped_out) {
  std::error_code ec;
  if (const std::filesystem::file_status status = std::filesystem::status(dir, ec);
      !std::filesystem::is_directory(status)) {
    std::string why;
    if (status.type() == std::filesystem::file_type::not_found) {
      why = "no such directory";
    } else if (ec) {
      why = ec.message();
    } else if (dir.filename() == kMetadata) {
      why = fmt::format(
          "it is the {} file of a checkpoint or savepoint; name its directory, {}, instead",
          kMetadata, dir.parent_path().string());
    } else {
      why = fmt::format(
          "it is a {}, not a directory: a checkpoint or savepoint is a directory (a checkpoint's "
          "chk-<id>, a savepoint's savepoint-<id>, or a checkpoint directory, whose newest "
          "checkpoint is taken)",
          std::filesystem::is_regular_file(status) ? "file" : "special file");
    }
    throw Error(fmt::format("cannot restore from {}: {}", dir.string(), why));
  }
  if (!std::filesystem::exists(dir / kMetadata, ec)) {
    // A checkpoint root: its newest complete checkpoint that verifies.
    CheckpointStorage root(dir, job_name, 1);
    std::vector<std::string> skipped;
    if (std::optional<CompletedCheckpoint> cp = root.LoadLatest(&skipped)) {
      if (skipped_out != nullptr) {
        *skipped_out = std::move(skipped);
      }
      return *std::move(cp);
    }
    std::string why =
        skipped.empty() ? "it holds no completed checkpoint (no chk-<id>/_metadata)" : "";
    for (const std::string& line : skipped) {
      why += (why.empty() ? "" : "; ") + line;
    }
    throw Error(fmt::format("cannot restore from {}: {}", dir.string(), why));
  }
  CompletedCheckpoint cp;
  try {
    cp = ReadCheckpoint(dir, std::nullopt);
  } catch (const std::exception& e) {
    throw Error(fmt::format("cannot restore from {}: {}", dir.string(), e.what()));
  }
  if (cp.job != job_name) {
    // Flink restores a savepoint into a renamed (or another) job: its state is matched by
    // operator id, and state of an operator the job lacks is refused unless allowed.
    GetLogger("checkpoint")
        ->info(
            "restoring job \"{}\" from {}, a checkpoint of job \"{}\": its state is matched by "
            "operator id",
            job_name, dir.string(), cp.job);
  }
  return cp;
}

std::optional<std::string> CheckpointStorage::UnsafeFallBack(
    const JobSpec& spec, const std::filesystem::path& root, int64_t restored_id,
    const std::vector<std::string>& skipped) {
  if (skipped.empty()) {
    return std::nullopt;  // nothing passed over
  }
  const std::vector<int64_t> completed = CheckpointStorage(root, spec.name, 1).CompletedIds();
  if (completed.empty() || completed.back() <= restored_id) {
    return std::nullopt;  // only checkpoints that never completed were passed over
  }
  const std::string why = fmt::format("{}", fmt::join(skipped, "; "));
  if (restored_id == 0) {
    return fmt::format(
        "no retained checkpoint of it verifies ({}), and starting it from scratch would write "
        "again what its sinks wrote for checkpoint {}",
        why, completed.back());
  }
  for (const OperatorSpec& op : spec.operators) {
    if (op.sink && op.sink->delivery_guarantee == "exactly-once") {
      return fmt::format(
          "its newest completed checkpoint does not verify ({}), and sink '{}' commits at each "
          "checkpoint: restoring the older checkpoint {} would commit again what checkpoint {} "
          "committed",
          why, op.id, CheckpointStorage(root, spec.name, 1).CheckpointDir(restored_id).string(),
          completed.back());
    }
  }
  return std::nullopt;  // restoring the older one rewrites, never re-commits (a file sink
                        // truncates back)
}

std::optional<std::string> CheckpointStorage::CheckSavepointTarget(
    const std::filesystem::path& dir) {
  auto refuse = [&](const std::string& why) {
    return fmt::format("savepoint target directory '{}' cannot be used: {}", dir.string(), why);
  };
  if (dir.empty()) {
    return refuse("the path is empty");
  }
  // The nearest part of the path that exists decides: a directory we may write into, or not.
  std::error_code ec;
  std::filesystem::path at = std::filesystem::absolute(dir, ec);
  while (true) {
    struct stat st {};
    if (::stat(at.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        return refuse(fmt::format("'{}' is not a directory", at.string()));
      }
      if (::access(at.c_str(), W_OK | X_OK) != 0) {
        return refuse(fmt::format("'{}' is not writable: {}", at.string(),
                                  std::generic_category().message(errno)));
      }
      return std::nullopt;
    }
    if (errno != ENOENT && errno != ENOTDIR) {  // ENOTDIR: a parent is a file, found on the way up
      return refuse(fmt::format("'{}': {}", at.string(), std::generic_category().message(errno)));
    }
    if (!at.has_parent_path() || at.parent_path() == at) {
      return refuse(fmt::format("'{}' does not exist", at.string()));
    }
    at = at.parent_path();
  }
}

void CheckpointStorage::SetSavepointDirectory(int64_t id, std::filesystem::path dir) {
  MutexLock lock(savepoints_mu_);
  savepoint_dirs_[id] = std::move(dir);
}

}  // namespace tidemark
