#include "runtime/state/rocksdb_native_checkpoint.h"

#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <rocksdb/db.h>
#include <rocksdb/utilities/checkpoint.h>
#include <sstream>
#include <system_error>
#include <tuple>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/core/durable_file.h"
#include "runtime/core/errors.h"

namespace tidemark {
namespace {

constexpr uint32_t kVersion = 1;

std::string NewInstanceId() {
  std::random_device rd;
  const uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(getpid());
  return fmt::format("{:016x}", r);
}

void SyncFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int e = errno;
    if (fd >= 0) {
      ::close(fd);
    }
    throw FileWriteError(
        fmt::format("cannot sync {}: {}", path.string(), std::generic_category().message(e)), e);
  }
  ::close(fd);
}

/// `dst` as a hard link to `src`, or a copy where the file systems differ; fsynced.
void LinkOrCopy(const std::filesystem::path& src, const std::filesystem::path& dst) {
  std::error_code ec;
  std::filesystem::remove(dst, ec);
  if (::link(src.c_str(), dst.c_str()) != 0) {
    std::filesystem::copy_file(src, dst, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) {
      throw Error(fmt::format("rocksdb native checkpoint: cannot copy {} to {}: {}", src.string(),
                              dst.string(), ec.message()));
    }
  }
  // Keyed state is user data: 0600 like the checkpoint's other state files, whatever the umask
  // (a hard link shares the instance's file, whose directory is 0700 anyway).
  std::filesystem::permissions(
      dst, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace, ec);
  SyncFile(dst);
}

}  // namespace

RocksDbNativeCheckpoint::RocksDbNativeCheckpoint(RocksDbKeyedStore& store)
    : store_(store), instance_(NewInstanceId()) {}

void RocksDbNativeCheckpoint::ForgetUploads() {
  uploaded_.clear();
  ++generation_;
}

uint64_t RocksDbNativeCheckpoint::Snapshot(int64_t checkpoint_id, KeyGroupRange key_groups,
                                           IncrementalSnapshotTarget& target, StateWriter& w) {
  // RocksDB's checkpoint: flushes the memtables (no WAL) and hard links the live SST files.
  const std::filesystem::path local = store_.dir() + fmt::format("-chk-{}", checkpoint_id);
  std::error_code ec;
  std::filesystem::remove_all(local, ec);
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(store_.db(), &raw);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  if (s.ok()) {
    s = checkpoint->CreateCheckpoint(local.string(), /*log_size_for_flush=*/0);
  }
  if (!s.ok()) {
    std::filesystem::remove_all(local, ec);
    throw Error(fmt::format("rocksdb native checkpoint of {}: {}", store_.dir(), s.ToString()));
  }
  struct RemoveLocal {
    std::filesystem::path dir;
    ~RemoveLocal() {
      std::error_code e;
      std::filesystem::remove_all(dir, e);
    }
  } remove_local{local};

  const std::filesystem::path shared = target.root / "shared";
  std::filesystem::create_directories(shared, ec);
  if (ec) {
    throw CheckpointUploadError(fmt::format("cannot create {}: {}", shared.string(), ec.message()));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(local)) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::map<std::string, SharedStateFile> referenced;
  std::vector<std::pair<std::string, std::string>> inline_files;
  uint64_t uploaded_bytes = 0;
  for (const std::filesystem::path& file : files) {
    const std::string name = file.filename().string();
    if (file.extension() != ".sst") {
      std::ifstream in(file, std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      if (!in) {
        throw Error(fmt::format("rocksdb native checkpoint: cannot read {}", file.string()));
      }
      inline_files.emplace_back(name, bytes.str());
      continue;
    }
    if (auto it = uploaded_.find(name); it != uploaded_.end()) {
      referenced.emplace(name, it->second);
      continue;
    }
    // A new SST file: under a temporary name first, so a crash never leaves a partial file
    // under a name a checkpoint may reference.
    const std::string shared_name = fmt::format("{}-g{}-{}", instance_, generation_, name);
    const std::filesystem::path tmp = shared / (shared_name + ".inprogress");
    uint64_t size = 0;
    uint64_t sum = 0;
    try {
      LinkOrCopy(file, tmp);
      std::tie(size, sum) = SizeAndChecksumOf(tmp);
      std::filesystem::rename(tmp, shared / shared_name, ec);
      if (ec) {
        throw Error(fmt::format("cannot rename {}: {}", tmp.string(), ec.message()));
      }
    } catch (const std::exception& e) {
      // A full or failing checkpoint disk: the partial file goes (it would hold the space), and
      // the checkpoint is declined, not the task failed.
      std::filesystem::remove(tmp, ec);
      throw CheckpointUploadError(e.what());
    }
    referenced.emplace(name, SharedStateFile{"shared/" + shared_name, size, sum});
    uploaded_bytes += size;
  }
  try {
    SyncDirectory(shared);
  } catch (const std::exception& e) {
    throw CheckpointUploadError(e.what());
  }

  w.BeginSection("rocksdb-native", kVersion);
  w.WriteU32(static_cast<uint32_t>(key_groups.start));
  w.WriteU32(static_cast<uint32_t>(key_groups.end));
  w.WriteU32(static_cast<uint32_t>(referenced.size()));
  for (const auto& [name, f] : referenced) {
    w.WriteString(name);
    w.WriteString(f.path);
    w.WriteI64(static_cast<int64_t>(f.size));
    w.WriteI64(static_cast<int64_t>(f.checksum));
    target.referenced.push_back(f);
  }
  w.WriteU32(static_cast<uint32_t>(inline_files.size()));
  for (const auto& [name, bytes] : inline_files) {
    w.WriteString(name);
    w.WriteString(bytes);
  }
  w.EndSection();
  // Only live files are worth remembering: an SST file, once gone, never comes back.
  uploaded_ = std::move(referenced);
  return uploaded_bytes;
}

RocksDbNativeCheckpoint::Restored RocksDbNativeCheckpoint::Restore(
    StateReader& r, const std::filesystem::path& root, RocksDbKeyedStore::Options options,
    KeyGroupRange key_groups, const std::string& operator_name) {
  r.BeginSection("rocksdb-native", kVersion);
  KeyGroupRange written;
  written.start = static_cast<int>(r.ReadU32());
  written.end = static_cast<int>(r.ReadU32());
  if (!(written == key_groups)) {
    throw StateCorrupt(fmt::format(
        "operator \"{}\": its state is an incremental RocksDB checkpoint of key groups {}..{}, "
        "and this subtask owns key groups {}..{}: an incremental checkpoint restores only at the "
        "parallelism it was taken at; to change the parallelism, restore from a savepoint "
        "(tidemark savepoint, or stop --savepoint), which is canonical and redistributable",
        operator_name, written.start, written.end, key_groups.start, key_groups.end));
  }
  std::error_code ec;
  std::filesystem::remove_all(options.dir, ec);
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    throw Error(
        fmt::format("rocksdb state backend: cannot create {}: {}", options.dir, ec.message()));
  }
  std::map<std::string, SharedStateFile> files;
  const uint32_t n_sst = r.ReadU32();
  for (uint32_t i = 0; i < n_sst; ++i) {
    std::string name = r.ReadString();
    SharedStateFile f;
    f.path = r.ReadString();
    f.size = static_cast<uint64_t>(r.ReadI64());
    f.checksum = static_cast<uint64_t>(r.ReadI64());
    if (name.find('/') != std::string::npos || f.path.rfind("shared/", 0) != 0 ||
        f.path.find("..") != std::string::npos) {
      throw StateCorrupt("rocksdb native checkpoint: a bad file name in the handle");
    }
    const std::filesystem::path src = root / f.path;
    const uint64_t size = std::filesystem::file_size(src, ec);
    if (ec || size != f.size) {
      throw StateCorrupt(fmt::format(
          "operator \"{}\": shared file {} of the incremental checkpoint is {} (expected {} bytes)",
          operator_name, src.string(), ec ? ec.message() : fmt::format("{} bytes", size), f.size));
    }
    LinkOrCopy(src, std::filesystem::path(options.dir) / name);
    files.emplace(std::move(name), std::move(f));
  }
  const uint32_t n_inline = r.ReadU32();
  for (uint32_t i = 0; i < n_inline; ++i) {
    const std::string name = r.ReadString();
    const std::string bytes = r.ReadString();
    if (name.find('/') != std::string::npos || name == ".." || name.empty()) {
      throw StateCorrupt("rocksdb native checkpoint: a bad file name in the handle");
    }
    std::ofstream out(std::filesystem::path(options.dir) / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      throw Error(fmt::format("rocksdb state backend: cannot write {}/{}", options.dir, name));
    }
  }
  r.EndSection();
  options.open_existing = true;
  Restored restored;
  restored.store = std::make_unique<RocksDbKeyedStore>(std::move(options));
  restored.checkpoint = std::make_unique<RocksDbNativeCheckpoint>(*restored.store);
  restored.checkpoint->uploaded_ = std::move(files);
  return restored;
}

}  // namespace tidemark
