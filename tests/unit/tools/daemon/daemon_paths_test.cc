// The daemon's state directory helpers: its default, its lock, atomic registry writes.

#include "tools/daemon/daemon_paths.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/testing/daemon_harness.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;

/// Sets (or unsets, with nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old =
            std::getenv(name)) {  // NOLINT(concurrency-mt-unsafe): single-threaded test
      old_ = old;
    }
    value ? ::setenv(name, value, 1) : ::unsetenv(name);  // NOLINT(concurrency-mt-unsafe)
  }
  ~ScopedEnv() {
    old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_);
  }  // NOLINT(concurrency-mt-unsafe)

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DaemonPathsTest, TheStateDirIsUnderXdgStateHomeElseHomeLocalState) {
  {
    ScopedEnv xdg("XDG_STATE_HOME", "/var/tmp/state");
    EXPECT_EQ(DefaultStateDir(), "/var/tmp/state/tidemark");
  }
  {
    ScopedEnv xdg("XDG_STATE_HOME", "relative/state");  // not absolute: ignored, as the spec says
    ScopedEnv home("HOME", "/home/me");
    EXPECT_EQ(DefaultStateDir(), "/home/me/.local/state/tidemark");
  }
  {
    ScopedEnv xdg("XDG_STATE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(DefaultStateDir(), fmt::format("/tmp/tidemark-state-{}", ::geteuid()));
  }
}

TEST(DaemonPathsTest, OneProcessHoldsAStateDirectoryAndTheSecondIsToldWhich) {
  TempDir dir;
  const int fd = LockStateDirectory(dir.path());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ReadFile(dir.path() + "/lock"), fmt::format("{}\n", ::getpid()));
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() + "/lock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // flock(2) locks belong to the open file: a second open in this process conflicts as another
  // daemon's would.
  try {
    LockStateDirectory(dir.path());
    FAIL() << "locked twice";
  } catch (const DaemonSetupError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("another tidemarkd (pid {}) uses the state directory '{}'; stop it "
                          "or pass another --state-dir",
                          ::getpid(), dir.path()));
  }
  ::close(fd);
  const int again = LockStateDirectory(dir.path());
  EXPECT_GE(again, 0);
  ::close(again);
}

TEST(DaemonPathsTest, AnAtomicWriteReplacesTheWholeFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.path() + "/job.json";
  WriteFileAtomically(path, "first, and longer than the second\n");
  WriteFileAtomically(path, "second\n");
  EXPECT_EQ(ReadFile(path), "second\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  try {
    WriteFileAtomically(dir.path() + "/no/such/dir/job.json", "x");
    FAIL() << "wrote into a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("cannot write '{}/no/such/dir/job.json.tmp': No such file or directory",
                          dir.path()));
  }
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// Issue 41 item 8: a root daemon with --socket in a shared sticky directory followed another
// user's symlinks at SOCKET.log / SOCKET.pid (chmodding and writing the target). Files the daemon
// keeps there are opened with O_NOFOLLOW (and O_EXCL when new); a link is an error, its target
// untouched.
TEST(DaemonPathsTest, AFileBesideTheSocketIsNeverOpenedThroughASymlink) {
  TempDir dir;
  const std::string victim = dir.path() + "/victim";
  { std::ofstream(victim) << "precious\n"; }
  ::chmod(victim.c_str(), 0644);
  for (bool append : {true, false}) {
    SCOPED_TRACE(append);
    const std::string link = dir.path() + (append ? "/d.sock.log" : "/d.sock.pid");
    ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
    if (append) {
      try {
        OpenDaemonFile(link, append);
        ADD_FAILURE() << "opened through a symlink";
      } catch (const DaemonSetupError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot open '" + link +
                      "': Too many levels of symbolic links (a symbolic link: the daemon "
                      "does not follow one there)");
      }
    } else {
      // A pid file is made anew: the link itself is removed (never its target), then O_EXCL.
      const int fd = OpenDaemonFile(link, append);
      ASSERT_GE(fd, 0);
      ::close(fd);
      struct stat st {};
      ASSERT_EQ(::lstat(link.c_str(), &st), 0);
      EXPECT_TRUE(S_ISREG(st.st_mode));
      EXPECT_EQ(st.st_mode & 0777, 0600u);
    }
    EXPECT_EQ(ReadFile(victim), "precious\n");
    struct stat vst {};
    ASSERT_EQ(::stat(victim.c_str(), &vst), 0);
    EXPECT_EQ(vst.st_mode & 0777, 0644u);
  }
}

// ... and `--state-dir` chmodded an existing directory to 0700 without asking. Now that is an error
// naming the mode; the directory is left as it was. One the daemon creates is made 0700.
TEST(DaemonPathsTest, AnExistingDirectoryWithAnotherModeIsAnErrorNotChmodded) {
  TempDir dir;
  const std::string shared = dir.path() + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0755), 0);
  ::chmod(shared.c_str(), 0755);
  try {
    EnsurePrivateDirectory(shared);
    ADD_FAILURE() << "accepted a 0755 directory";
  } catch (const DaemonSetupError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        fmt::format(
            "'{0}' has mode 0755, not 0700: the daemon keeps its files only in a directory private "
            "to "
            "its user and does not change an existing one's mode (chmod 700 '{0}' if it is yours "
            "alone, or choose another)",
            shared));
  }
  struct stat st {};
  ASSERT_EQ(::stat(shared.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  const std::string fresh = dir.path() + "/fresh/state";
  EnsurePrivateDirectory(fresh);
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

}  // namespace
}  // namespace tidemark
