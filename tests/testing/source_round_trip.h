#pragma once

// The round-trip test of source reader snapshots: read N records, snapshot the reader's splits
// (`SourceReader::SnapshotState`, `SourceSplit::WriteTo`), restore them (`Source::RestoreSplit`)
// into a fresh reader on a clock at the same processing time, read the rest; for every N the
// concatenation equals the uninterrupted read.

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/state/state_serializer.h"
#include "sources/source_reader.h"
#include "tests/unit/sources/fake_reader_output.h"

namespace tidemark::testing {

/// The records ("rec ..." events of `FakeReaderOutput`) subtask `subtask` of `parallelism`
/// reads; with `cut` >= 0 the reader is snapshotted after `cut` records and replaced by a fresh
/// one restored from the split bytes. `with_times` false drops the "@<processing time>" part
/// (for readers whose pacing restarts on restore).
inline std::vector<std::string> ReadWithRestore(const Source& source, int cut, bool with_times,
                                                int subtask = 0, int parallelism = 1) {
  auto ctx = std::make_unique<FakeReaderContext>(subtask, parallelism);
  auto out = std::make_unique<FakeReaderOutput>(source.schema(), ctx->time);
  std::vector<std::string> records;
  auto reader = source.CreateReader(subtask);
  reader->Start(*ctx);
  reader->AddSplits(SplitEnumerator::SplitsFor(source, subtask, parallelism));
  reader->NotifyNoMoreSplits();
  bool done = false;
  for (int polls = 0; polls < 1000000 && !done; ++polls) {
    if (static_cast<int>(out->records.size()) == cut) {
      cut = -1;
      StateWriter writer;
      const auto splits = reader->SnapshotState(1);
      writer.WriteU32(static_cast<uint32_t>(splits.size()));
      for (const auto& s : splits) {
        s->WriteTo(writer);
      }
      const std::string bytes = writer.Release();
      const Timestamp now = ctx->time.GetCurrentProcessingTime();
      records.insert(records.end(), out->records.begin(), out->records.end());
      reader->Close();
      reader.reset();
      ctx = std::make_unique<FakeReaderContext>(subtask, parallelism);
      ctx->time.AdvanceTo(now);
      out = std::make_unique<FakeReaderOutput>(source.schema(), ctx->time);
      reader = source.CreateReader(subtask);
      reader->Start(*ctx);
      StateReader in(bytes);
      std::vector<std::unique_ptr<SourceSplit>> restored;
      const uint32_t n = in.ReadU32();
      for (uint32_t i = 0; i < n; ++i) {
        restored.push_back(source.RestoreSplit(in));
      }
      EXPECT_TRUE(in.AtEnd());
      reader->AddSplits(std::move(restored));
      reader->NotifyNoMoreSplits();
    }
    done = reader->PollNext(*out) == InputStatus::kEndOfInput;
  }
  EXPECT_TRUE(done) << "reader did not end";
  records.insert(records.end(), out->records.begin(), out->records.end());
  if (!with_times) {
    for (std::string& r : records) {
      const size_t at = r.find(" @");
      const size_t end = r.find(' ', at + 2);
      r.erase(at, end - at);
    }
  }
  return records;
}

/// For every cut 0..(records read): `ReadWithRestore` equals the uninterrupted read. Returns the
/// uninterrupted read.
inline std::vector<std::string> ExpectSourceRoundTrips(const Source& source, bool with_times,
                                                       int subtask = 0, int parallelism = 1) {
  const std::vector<std::string> whole =
      ReadWithRestore(source, -1, with_times, subtask, parallelism);
  for (int cut = 0; cut <= static_cast<int>(whole.size()); ++cut) {
    SCOPED_TRACE("snapshot after " + std::to_string(cut) + " records");
    EXPECT_EQ(ReadWithRestore(source, cut, with_times, subtask, parallelism), whole);
    if (::testing::Test::HasFailure()) {
      break;
    }
  }
  return whole;
}

}  // namespace tidemark::testing
