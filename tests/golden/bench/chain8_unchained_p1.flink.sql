-- Flink SQL (2.x) for the tidemark job 'chain8_unchained_p1' (jobs/bench/chain8_unchained_p1.yaml), written by `tidemark export --flink-sql`.
-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL 'd+0.001' SECOND`
-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at the same
-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the computed column
-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.
-- Best effort: 1 feature(s) have no Flink SQL form; each is marked `-- DROPPED` below.

SET 'execution.runtime-mode' = 'streaming';
SET 'pipeline.auto-watermark-interval' = '200ms';
-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in the session time zone).
SET 'table.local-time-zone' = 'UTC';

-- Source 'source' (jobs/bench/chain8_unchained_p1.yaml:6:5): generator source.
-- DROPPED (jobs/bench/chain8_unchained_p1.yaml:8:20): source type generator (no Flink connector makes these records); nearest: 'connector' = 'datagen' (random rows)
CREATE TABLE `source` (
  `key` BIGINT,
  `value` DOUBLE,
  `ts` BIGINT
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '5000000'
);

CREATE TEMPORARY VIEW `op1` AS
SELECT `key`, `value` * 0.999 + 0.001 AS `value`, `ts`
FROM `source`;

CREATE TEMPORARY VIEW `op2` AS
SELECT `key`, `value`, `ts`
FROM `op1`
WHERE `value` > 0.05;

CREATE TEMPORARY VIEW `op3` AS
SELECT `key`, `value` * 0.999 + 0.001 AS `value`, `ts`
FROM `op2`;

CREATE TEMPORARY VIEW `op4` AS
SELECT `key`, `value`, `ts`
FROM `op3`
WHERE `value` > 0.05;

CREATE TEMPORARY VIEW `op5` AS
SELECT `key`, `value` * 0.999 + 0.001 AS `value`, `ts`
FROM `op4`;

CREATE TEMPORARY VIEW `op6` AS
SELECT `key`, `value`, `ts`
FROM `op5`
WHERE `value` > 0.05;

CREATE TEMPORARY VIEW `op7` AS
SELECT `key`, `value` * 0.999 + 0.001 AS `value`, `ts`
FROM `op6`;

CREATE TEMPORARY VIEW `op8` AS
SELECT `key`, `value`, `ts`
FROM `op7`
WHERE `value` > 0.05;

-- sink type checksum (kept by tidemark for reports and tests) becomes blackhole.
CREATE TABLE `sink` (
  `key` BIGINT,
  `value` DOUBLE,
  `ts` BIGINT
) WITH (
  'connector' = 'blackhole'
);

EXECUTE STATEMENT SET
BEGIN
INSERT INTO `sink`
SELECT `key`, `value`, `ts`
FROM `op8`;
END;
