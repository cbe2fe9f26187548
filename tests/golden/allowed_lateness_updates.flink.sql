-- Flink SQL (2.x) for the tidemark job 'allowed-lateness-updates' (jobs/allowed_lateness_updates.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 3 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/allowed_lateness_updates.yaml:16:5): replay source.
-- DROPPED (jobs/allowed_lateness_updates.yaml:19:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 0ms: tidemark's watermark is max(ts) - 0ms - 1ms.
CREATE TABLE `source` (
  `split` STRING,
  `ts` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.001' SECOND
) WITH (
  'connector' = 'datagen'
);

-- DROPPED (jobs/allowed_lateness_updates.yaml:32:25): allowed lateness (5s) on a window; nearest: none on window TVFs, which drop late rows (legacy GROUP BY windows have the experimental 'table.exec.emit.allow-lateness')
-- DROPPED (jobs/allowed_lateness_updates.yaml:33:20): the late side output 'late'; nearest: a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before the window
-- tumbling windows of 10s.
CREATE TEMPORARY VIEW `windows` AS
SELECT `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       CAST(0 AS BIGINT) AS `firing`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `source`, DESCRIPTOR(`rowtime`), INTERVAL '10' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`;

CREATE TABLE `results` (
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `firing` BIGINT
) WITH (
  'connector' = 'print'
);

-- Sink 'late' is left out: its input was dropped.

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `results`
SELECT `window_start`, `window_end`, `count`, `firing`
FROM `windows`;
END;
