-- Flink SQL (2.x) for the tidemark job 'two-sources-p2' (jobs/two_sources_p2.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 4 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
SET 'parallelism.default' = '2';
-- Per-operator parallelism (fired (1), late (1)) has no SQL form: 'parallelism.default' applies to every operator.
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'clicks' (jobs/two_sources_p2.yaml:27:5): replay source.
-- DROPPED (jobs/two_sources_p2.yaml:30:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 200ms: tidemark's watermark is max(ts) - 200ms - 1ms.
CREATE TABLE `clicks` (
  `ts` BIGINT,
  `user` STRING,
  `src` STRING,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.201' SECOND
) WITH (
  'connector' = 'datagen'
);

-- Source 'views' (jobs/two_sources_p2.yaml:37:5): replay source.
-- DROPPED (jobs/two_sources_p2.yaml:40:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 200ms: tidemark's watermark is max(ts) - 200ms - 1ms.
CREATE TABLE `views` (
  `ts` BIGINT,
  `user` STRING,
  `src` STRING,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.201' SECOND
) WITH (
  'connector' = 'datagen'
);

-- union: the watermark is the minimum over the inputs, in Flink as in tidemark.
CREATE TEMPORARY VIEW `both` AS
SELECT `ts`, `user`, `src`, `rowtime` FROM `clicks`
UNION ALL
SELECT `ts`, `user`, `src`, `rowtime` FROM `views`;

-- DROPPED (jobs/two_sources_p2.yaml:57:20): the late side output 'late'; nearest: a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before the window
-- DROPPED (jobs/two_sources_p2.yaml:58:23): the watermark column (the watermark that fired the window); nearest: window_time, which is window_end - 1 ms, the first watermark that fires the window
-- tumbling windows of 1s.
CREATE TEMPORARY VIEW `windows` AS
SELECT `user`,
       `window_start`,
       `window_end`,
       COUNT(*) AS `count`,
       `window_time` AS `rowtime`
FROM TABLE(TUMBLE(TABLE `both`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND))
GROUP BY `window_start`, `window_end`, `window_time`, `user`;

CREATE TABLE `fired` (
  `user` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT
) WITH (
  'connector' = 'print'
);

-- Sink 'late' is left out: its input was dropped.

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `fired`
SELECT `user`, `window_start`, `window_end`, `count`
FROM `windows`;
END;
