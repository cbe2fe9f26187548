#pragma once

#include <string>

#include "runtime/core/durable_file.h"
#include "runtime/core/errors.h"

namespace tidemark {

/// The daemon could not be set up: its directory is not private, a live daemon holds the socket,
/// a token file is readable by others, an address is not allowed. `what()` says what to do.
class DaemonSetupError : public Error {
 public:
  using Error::Error;
};

/// Where the daemon keeps its socket, token and log: `$XDG_RUNTIME_DIR/tidemark` when that
/// variable names an absolute path, else `/tmp/tidemark-$UID`. Thread-safe (reads the env).
std::string DefaultRuntimeDir();

/// `DefaultRuntimeDir() + "/tidemarkd.sock"`.
std::string DefaultSocketPath();

/// Where the daemon keeps its job registry and checkpoints by default (`tidemarkd --state-dir`):
/// `$XDG_STATE_HOME/tidemark` when that variable names an absolute path, else
/// `$HOME/.local/state/tidemark`. Thread-safe (reads the env).
std::string DefaultStateDir();

/// Takes an exclusive flock(2) on `dir/lock` (created 0600) for the rest of the process's life and
/// writes this process's pid into it: one daemon per state directory. Throws DaemonSetupError
/// naming the holder's pid when another process has it. Returns the open descriptor.
int LockStateDirectory(const std::string& dir);

// WriteFileAtomically (the registry's job.json / job.yaml) is runtime/core/durable_file.h.

/// Creates `dir` (and missing parents of it with mode 0700) if needed and makes sure only the
/// current user can open it: it must be a directory (not a symlink) owned by the effective uid,
/// with mode 0700. A directory it creates is set to 0700; an existing one with another mode is
/// an error naming the mode (never chmodded: it may be shared on purpose, or not the directory
/// meant). Throws DaemonSetupError otherwise.
void EnsurePrivateDirectory(const std::string& dir);

/// Opens a file the daemon keeps beside its socket or in its state directory (log, pid file)
/// for writing, mode 0600, never following a symbolic link at `path` (O_NOFOLLOW): in a shared
/// sticky directory another user's link there must not make a root daemon write or chmod its
/// target. `append`: O_APPEND, an existing file is kept; else an existing file is removed first
/// and the new one made with O_EXCL. The file must be a regular file owned by the effective uid.
/// Returns the descriptor (O_CLOEXEC); throws DaemonSetupError naming `path` and why.
int OpenDaemonFile(const std::string& path, bool append);

/// True when a process accepts connections on the Unix socket at `path` (a live daemon); false
/// when nothing is there or the socket is stale (connection refused).
bool IsUnixSocketLive(const std::string& path);

/// Reads a bearer token from `path`, which must be a regular file owned by the effective uid with
/// no group or other permission bits (0600 or stricter). When the file does not exist and
/// `create` is set, writes a fresh random token (32 hex digits) with mode 0600. Throws
/// DaemonSetupError. Surrounding whitespace is trimmed.
std::string ReadTokenFile(const std::string& path, bool create);

}  // namespace tidemark
