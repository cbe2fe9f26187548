-- Flink SQL (2.x) for the tidemark job 'broadcast-limits' (jobs/broadcast_limits.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 3 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
SET 'parallelism.default' = '2';
-- Per-operator parallelism (limits (1), payments (1), out (1)) has no SQL form: 'parallelism.default' applies to every operator.
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'limits' (jobs/broadcast_limits.yaml:19:5): replay source.
-- DROPPED (jobs/broadcast_limits.yaml:23:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
CREATE TABLE `limits` (
  `max_amount` BIGINT
) WITH (
  'connector' = 'datagen'
);

-- Source 'payments' (jobs/broadcast_limits.yaml:26:5): replay source.
-- DROPPED (jobs/broadcast_limits.yaml:30:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
CREATE TABLE `payments` (
  `user` STRING,
  `ts` BIGINT,
  `amount` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen'
);

-- DROPPED (jobs/broadcast_limits.yaml:38:11): process (keyed state and timers set per record; a KeyedProcessFunction); nearest: a KeyedProcessFunction in the DataStream API, or a ProcessTableFunction (Flink 2.1 and later), both Java code; SQL has no timers
-- Operator 'alerts' is left out; what reads it is left out too.

-- Sink 'out' is left out: its input was dropped.

-- No sink could be written: every path to a sink was dropped.
