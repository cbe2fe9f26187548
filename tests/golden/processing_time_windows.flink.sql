-- Flink SQL (2.x) for the tidemark job 'processing-time-windows' (jobs/processing_time_windows.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 2 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/processing_time_windows.yaml:17:5): replay source.
-- DROPPED (jobs/processing_time_windows.yaml:20:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
CREATE TABLE `source` (
  `ts` BIGINT,
  `v` BIGINT
) WITH (
  'connector' = 'datagen'
);

-- DROPPED (jobs/processing_time_windows.yaml:28:13): a processing-time window (processing-time timers); nearest: the same window TVF over a `proctime AS PROCTIME()` column
-- Window 'windows' is left out; what reads it is left out too.

-- Sink 'fired' is left out: its input was dropped.

-- No sink could be written: every path to a sink was dropped.
