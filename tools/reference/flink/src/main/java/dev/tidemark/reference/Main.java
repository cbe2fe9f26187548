package dev.tidemark.reference;

import dev.tidemark.reference.experiment.TwoSplitExperiment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Entry point of tidemark's Flink reference harness; tools/dev/flink-reference.sh calls it.
 *
 * <pre>
 * experiment [--runs N] [--fire]       the two-split experiment, both modes, N runs each
 * scenarios FILE.jsonl...              scenario cases on Flink's operators and test harnesses
 * differential --seed S --cases N      random cases on Flink, then on tidemark-scenarios
 * job JOB.yaml...                      tidemark jobs on a MiniCluster (DataStream), rows vs tidemark run
 * sql JOB.yaml...                      tidemark export --flink-sql on a TableEnvironment, rows vs tidemark run
 * compare FLINK.jsonl TIDEMARK.jsonl   job's and sql's comparison of rows (DOUBLEs within 1e-12) on two files
 * bench [--runs N] [--warmup N] [--warmup-count N] [--count N] [--data-dir D] [--no-heap] JOB.yaml
 *                                      a bench job on tidemark and on a MiniCluster: both rates, JSON
 * </pre>
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      usage();
      System.exit(2);
    }
    String command = args[0];
    List<String> rest = new ArrayList<>(Arrays.asList(args).subList(1, args.length));
    int status;
    switch (command) {
      case "experiment":
        status = experiment(rest);
        break;
      case "scenarios":
        if (rest.isEmpty()) {
          usage();
          status = 2;
        } else {
          java.util.Map<String, String> allowed = new java.util.TreeMap<>();
          if (rest.size() >= 2 && rest.get(0).equals("--allow")) {
            allowed = dev.tidemark.reference.scenarios.Scenarios.readAllowList(java.nio.file.Path.of(rest.get(1)));
            rest = rest.subList(2, rest.size());
          }
          status = dev.tidemark.reference.scenarios.Scenarios.run(rest, allowed, System.out) == 0 ? 0 : 1;
        }
        break;
      case "differential":
        status = differential(rest);
        break;
      case "compare":
        // The rows comparison of job and sql on two files (its own test, tests/flink_reference).
        if (rest.size() != 2) {
          usage();
          status = 2;
        } else {
          String diff = dev.tidemark.reference.job.TidemarkRows.compare(
              java.nio.file.Files.readAllLines(java.nio.file.Path.of(rest.get(0))),
              java.nio.file.Files.readAllLines(java.nio.file.Path.of(rest.get(1))));
          System.out.println(diff == null ? "PASS rows equal" : "FAIL rows differ\n" + diff.stripTrailing());
          status = diff == null ? 0 : 1;
        }
        break;
      case "bench":
        {
          String tidemark = System.getenv("TIDEMARK");
          if (tidemark == null) {
            System.err.println("flink-reference bench: needs TIDEMARK (the tidemark binary)");
            status = 2;
          } else {
            status = dev.tidemark.reference.bench.BenchCommand.run(rest, tidemark, System.out);
          }
        }
        break;
      case "job":
      case "sql":
        {
          String tidemark = System.getenv("TIDEMARK");
          int expectPassed = 0;
          if (rest.size() >= 2 && rest.get(0).equals("--expect-passed")) {
            expectPassed = Integer.parseInt(rest.get(1));
            rest = rest.subList(2, rest.size());
          }
          if (rest.isEmpty() || tidemark == null) {
            System.err.println("flink-reference " + command + ": needs JOB.yaml... and TIDEMARK (the tidemark binary)");
            status = 2;
          } else if (command.equals("sql")) {
            status = dev.tidemark.reference.job.SqlJobs.run(rest, tidemark, expectPassed, System.out);
          } else {
            status = dev.tidemark.reference.job.DataStreamJobs.run(rest, tidemark, expectPassed, System.out);
          }
        }
        break;
      default:
        System.err.println("flink-reference: unknown command '" + command + "'");
        usage();
        status = 2;
    }
    System.out.flush();
    System.exit(status);
  }

  private static void usage() {
    System.err.println(
        "usage: flink-reference experiment [--runs N] [--fire]\n"
            + "       flink-reference scenarios [--allow KNOWN_FAILURES] FILE.jsonl...\n"
            + "       flink-reference differential --seed S --cases N [--out FILE]\n"
            + "       flink-reference job [--expect-passed N] JOB.yaml...\n"
            + "       flink-reference sql [--expect-passed N] JOB.yaml...\n"
            + "       flink-reference compare FLINK.jsonl TIDEMARK.jsonl\n"
            + "       flink-reference bench [--runs N] [--warmup N] [--warmup-count N] [--count N] [--data-dir D] [--no-heap] JOB.yaml");
  }

  private static int differential(List<String> args) throws Exception {
    Long seed = null;
    Integer cases = null;
    String out = System.getenv().getOrDefault("TIDEMARK_BUILD_DIR", "build/flink-reference");
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--seed") && i + 1 < args.size()) {
        seed = Long.parseLong(args.get(++i));
      } else if (a.equals("--cases") && i + 1 < args.size()) {
        cases = Integer.parseInt(args.get(++i));
      } else if (a.equals("--out") && i + 1 < args.size()) {
        out = args.get(++i);
      } else {
        System.err.println("flink-reference differential: unknown argument '" + a + "'");
        return 2;
      }
    }
    String tidemark = System.getenv("TIDEMARK_SCENARIOS");
    if (seed == null || cases == null || tidemark == null) {
      System.err.println("flink-reference differential: needs --seed S --cases N and TIDEMARK_SCENARIOS");
      return 2;
    }
    return dev.tidemark.reference.scenarios.Differential.run(
            seed, cases, java.nio.file.Path.of(out), tidemark, System.out)
        == 0
        ? 0
        : 1;
  }

  private static int experiment(List<String> args) throws Exception {
    int runs = 1;
    boolean fire = false;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--runs") && i + 1 < args.size()) {
        runs = Integer.parseInt(args.get(++i));
      } else if (a.equals("--fire")) {
        fire = true;
      } else {
        System.err.println("flink-reference experiment: unknown argument '" + a + "'");
        return 2;
      }
    }
    int status = 0;
    for (String mode : List.of("split", "operator")) {
      List<String> first = null;
      for (int r = 0; r < runs; r++) {
        List<String> lines = TwoSplitExperiment.run(mode, fire);
        if (first == null) {
          first = lines;
        } else if (!lines.equals(first)) {
          System.err.println("flink-reference experiment: mode=" + mode + " run " + (r + 1) + " differs from run 1");
          status = 1;
        }
        for (String line : lines) {
          System.out.println(line);
        }
      }
    }
    return status;
  }
}
