-- Flink SQL (2.x) for the tidemark job 'keyed-process-timers' (jobs/keyed_process_timers.yaml), written by `tidemark export --flink-sql`.
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

-- Source 'source' (jobs/keyed_process_timers.yaml:25:5): replay source.
-- DROPPED (jobs/keyed_process_timers.yaml:28:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
CREATE TABLE `source` (
  `user` STRING,
  `ts` BIGINT,
  `amount` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen'
);

-- DROPPED (jobs/keyed_process_timers.yaml:36:11): process (keyed state and timers set per record; a KeyedProcessFunction); nearest: a KeyedProcessFunction in the DataStream API, or a ProcessTableFunction (Flink 2.1 and later), both Java code; SQL has no timers
-- Operator 'quiet' is left out; what reads it is left out too.

-- Sink 'out' is left out: its input was dropped.

-- No sink could be written: every path to a sink was dropped.
