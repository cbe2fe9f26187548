-- Flink SQL (2.x) for the tidemark job 'sessions-per-user' (jobs/sessions_per_user.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 1 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';
-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is the machine's clock.

-- Source 'source' (jobs/sessions_per_user.yaml:14:5): replay source.
-- DROPPED (jobs/sessions_per_user.yaml:17:13): source type replay (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
-- bounded out-of-orderness 500ms: tidemark's watermark is max(ts) - 500ms - 1ms.
CREATE TABLE `source` (
  `user` STRING,
  `ts` BIGINT,
  `amount` BIGINT,
  `rowtime` AS TO_TIMESTAMP_LTZ(`ts`, 3),
  WATERMARK FOR `rowtime` AS `rowtime` - INTERVAL '0.501' SECOND
) WITH (
  'connector' = 'datagen'
);

CREATE TEMPORARY VIEW `paid` AS
SELECT `user`, `ts`, `amount`, `rowtime`
FROM `source`
WHERE ((`amount` > 0) AND (`user` <> ''));

CREATE TEMPORARY VIEW `cents` AS
SELECT `user`, `ts`, `amount`, (`amount` * 100) AS `cents`, `rowtime`
FROM `paid`;

-- session windows, gap 2s per key.
CREATE TEMPORARY VIEW `sessions` AS
SELECT `user`,
       SESSION_START(`rowtime`, INTERVAL '2' SECOND) AS `window_start`,
       SESSION_END(`rowtime`, INTERVAL '2' SECOND) AS `window_end`,
       COUNT(*) AS `count`,
       SUM(`cents`) AS `cents`,
       SESSION_ROWTIME(`rowtime`, INTERVAL '2' SECOND) AS `rowtime`
FROM `cents`
GROUP BY SESSION(`rowtime`, INTERVAL '2' SECOND), `user`;

CREATE TABLE `out` (
  `user` STRING,
  `window_start` TIMESTAMP(3),
  `window_end` TIMESTAMP(3),
  `count` BIGINT,
  `cents` BIGINT
) WITH (
  'connector' = 'print'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `out`
SELECT `user`, `window_start`, `window_end`, `count`, `cents`
FROM `sessions`;
END;
