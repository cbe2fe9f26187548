#!/usr/bin/env bash
# A real Apache Kafka broker for the kafka_broker tests (issue 40): one KRaft node (broker and
# controller in one JVM) on 127.0.0.1, transactions on (replication factors 1, min ISR 1).
#
#   tools/dev/kafka-broker.sh fetch|start|stop|env|halt|resume
#
#   fetch   copy org.apache.kafka:kafka_2.13 (version pinned in tools/dev/kafka/pom.xml) and its
#           runtime jars with Maven (`mvn -q -B`, local repository ~/.m2) into $KAFKA_BROKER_LIBS;
#           skipped while the folder matches the pom.
#   start   fetch, stop whatever broker an earlier run left in $KAFKA_BROKER_STATE, format a fresh
#           store in a temporary folder (`kafka.tools.StorageTool format --standalone`), start
#           `kafka.Kafka` at a free port, wait until it says "Kafka Server started" and accepts a
#           connection, write the address to $KAFKA_BROKER_STATE/bootstrap and print it.
#   stop    stop the broker (SIGTERM, SIGKILL after 20 s) and remove its folder. Always exit 0.
#   env     print `TM_KAFKA_BOOTSTRAP=host:port` for a running broker (exit 1 when none).
#   halt    stop the broker's process but keep its folder and ports (an outage); `resume` starts
#           it again on the same store, ports and cluster id.
#
# KAFKA_BROKER_STATE: the broker's control folder (default build/kafka-broker/shared); one broker
# per folder, so a test can run a private broker next to the shared one. KAFKA_BROKER_LIBS: the jar
# folder (default build/kafka-broker/libs). KAFKA_BROKER_HEAP: -Xmx (default 512m).
# KAFKA_BROKER_START_TIMEOUT: seconds to wait for the broker (default 120).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
POM=$ROOT/tools/dev/kafka/pom.xml
LOG4J=$ROOT/tools/dev/kafka/log4j2.properties
LIBS=${KAFKA_BROKER_LIBS:-$ROOT/build/kafka-broker/libs}
STATE=${KAFKA_BROKER_STATE:-$ROOT/build/kafka-broker/shared}
HEAP=${KAFKA_BROKER_HEAP:-512m}
START_TIMEOUT=${KAFKA_BROKER_START_TIMEOUT:-120}

die() {
  echo "kafka-broker: $*" >&2
  exit 1
}

fetch() {
  mkdir -p "$(dirname "$LIBS")"
  local stamp want
  want=$(sha256sum "$POM" | cut -d' ' -f1)
  # One fetch at a time (the release and sanitizer builds may start brokers together).
  exec 9>"$(dirname "$LIBS")/.fetch.lock"
  flock 9
  stamp=$(cat "$LIBS/.pom.sha256" 2>/dev/null || true)
  if [[ $stamp != "$want" ]]; then
    command -v mvn >/dev/null || die "mvn not found (tools/dev/install-deps.sh installs maven)"
    rm -rf "$LIBS"
    mvn -q -B -f "$POM" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$LIBS" >&2 || die "mvn could not fetch the broker's jars ($POM)"
    echo "$want" >"$LIBS/.pom.sha256"
  fi
  exec 9>&-
}

# The running broker's settings (written by start): PID, DIR, PORT, CONTROLLER_PORT.
load_env() {
  [[ -f $STATE/broker.env ]] || return 1
  # shellcheck disable=SC1091
  source "$STATE/broker.env"
}

alive() {  # pid: is it our kafka.Kafka process?
  [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}

kill_broker() {  # pid
  local pid=$1 i
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 200; i++)); do
    alive "$pid" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  while alive "$pid"; do sleep 0.1; done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

launch() {  # start kafka.Kafka on $DIR/server.properties, wait until it answers
  local start=$SECONDS
  : >"$DIR/broker.log"
  setsid java -Xmx"$HEAP" -Xms128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dkafka.logs.dir="$DIR" -Dlog4j2.configurationFile="$LOG4J" -cp "$LIBS/*" \
    kafka.Kafka "$DIR/server.properties" >"$DIR/stdout" 2>&1 </dev/null &
  PID=$!
  cat >"$STATE/broker.env" <<EOF
PID=$PID
DIR=$DIR
PORT=$PORT
CONTROLLER_PORT=$CONTROLLER_PORT
EOF
  until grep -q 'Kafka Server started' "$DIR/broker.log" 2>/dev/null &&
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do
    if ! kill -0 "$PID" 2>/dev/null; then
      tail -n 30 "$DIR/stdout" "$DIR/broker.log" >&2 || true
      die "the broker exited while starting (log above)"
    fi
    if ((SECONDS - start > START_TIMEOUT)); then
      tail -n 30 "$DIR/broker.log" >&2 || true
      kill_broker "$PID"
      die "the broker did not start within ${START_TIMEOUT}s (log above)"
    fi
    sleep 0.1
  done
  echo "127.0.0.1:$PORT" >"$STATE/bootstrap"
  echo "kafka-broker: started at 127.0.0.1:$PORT in $((SECONDS - start))s (pid $PID, $DIR)" >&2
}

start() {
  fetch
  mkdir -p "$STATE"
  stop_broker  # a broker an earlier run left behind
  DIR=$(mktemp -d "${TMPDIR:-/tmp}/tidemark-kafka.XXXXXX")
  PORT=$(free_port)
  CONTROLLER_PORT=$(free_port)
  while [[ $CONTROLLER_PORT == "$PORT" ]]; do CONTROLLER_PORT=$(free_port); done
  cat >"$DIR/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DIR/data
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
background.threads=2
log.flush.interval.messages=9223372036854775807
# Test records carry event times near 1970 as their CreateTime: with time retention the broker
# would delete them (the active segment too) at its next retention check.
log.retention.ms=-1
EOF
  # A Kafka cluster id: 16 random bytes, URL-safe base64 without padding (saves a JVM for
  # `StorageTool random-uuid`); as Kafka's Uuid.randomUuid, never one starting with '-', which
  # the command line would take for an option.
  local cluster_id=-
  while [[ $cluster_id == -* ]]; do
    cluster_id=$(python3 -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("="))')
  done
  java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$LOG4J" -Dkafka.logs.dir="$DIR" \
    -cp "$LIBS/*" kafka.tools.StorageTool format --standalone -t "$cluster_id" \
    -c "$DIR/server.properties" >"$DIR/format.out" 2>&1 ||
    { cat "$DIR/format.out" >&2; rm -rf "$DIR"; die "kafka.tools.StorageTool format failed"; }
  launch
  echo "127.0.0.1:$PORT"
}

stop_broker() {
  if load_env; then
    kill_broker "$PID"
    [[ -n ${DIR:-} && $DIR == */tidemark-kafka.* ]] && rm -rf "$DIR"
  fi
  rm -f "$STATE/broker.env" "$STATE/bootstrap"
}

case ${1:-} in
  fetch) fetch ;;
  start) start ;;
  stop) stop_broker ;;
  env)
    load_env && alive "$PID" || die "no broker running in $STATE"
    echo "TM_KAFKA_BOOTSTRAP=127.0.0.1:$PORT"
    ;;
  halt)
    load_env || die "no broker in $STATE"
    kill_broker "$PID"
    ;;
  resume)
    load_env || die "no broker in $STATE"
    alive "$PID" && die "the broker is running (pid $PID)"
    launch
    ;;
  *)
    echo "usage: $0 fetch|start|stop|env|halt|resume" >&2
    exit 2
    ;;
esac
