#pragma once

#include "runtime/core/errors.h"

namespace tidemark {

/// A failure that no restart can cure, because every attempt would meet it again: state restored
/// from a checkpoint or savepoint that this job's operator cannot read (written by another
/// operator type, corrupt, for other key groups), or a local directory the environment refuses (a
/// `pipeline.rocksdb.localdir` that is a regular file). Mirrors Flink's
/// `ThrowableType.NonRecoverableError` (`SuppressRestartsException`): the job fails at once,
/// whatever its restart strategy, with `what()` as the cause; the daemon and its other jobs go on.
class NonRecoverableError : public Error {
 public:
  using Error::Error;
};

}  // namespace tidemark
