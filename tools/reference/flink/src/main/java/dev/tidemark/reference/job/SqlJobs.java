package dev.tidemark.reference.job;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.CloseableIterator;

/**
 * {@code flink-reference.sh sql JOB.yaml...}: each job's {@code tidemark export --flink-sql} script
 * executed on Flink's local {@link TableEnvironment} (streaming mode), the rows of every INSERT into
 * a print table collected and written as tidemark's print sink writes them, then compared with
 * {@code tidemark run JOB} as multisets of lines. A job whose export fails (it needs
 * {@code --best-effort}) is skipped, not counted. Closing line {@code N passed, M failed}.
 *
 * <p>The script runs as written (its SETs, DDL, views); only the statement set's INSERTs are
 * taken apart: each SELECT runs as a query whose rows are collected (the print connector writes to
 * the task managers' stdout, which cannot be compared), with the sink table's column names. One
 * JVM and one TableEnvironment per job.
 */
public final class SqlJobs {
  private SqlJobs() {}

  private static final Pattern SET = Pattern.compile("(?is)SET\\s+'([^']*)'\\s*=\\s*'([^']*)'");
  private static final Pattern CONNECTOR = Pattern.compile("'connector'\\s*=\\s*'([^']*)'");
  private static final Pattern INSERT =
      Pattern.compile("(?is)INSERT\\s+INTO\\s+(`[^`]+`|\\S+)\\s+(SELECT\\b.*)");

  public static int run(List<String> jobs, String tidemark, int expectPassed, PrintStream out)
      throws Exception {
    int passed = 0;
    int failed = 0;
    int skipped = 0;
    for (String job : jobs) {
      long t0 = System.nanoTime();
      String verdict;
      try {
        Result r = runOne(job, tidemark);
        verdict = r.verdict;
        if (r.status == 0) {
          passed++;
        } else if (r.status == 1) {
          failed++;
        } else {
          skipped++;
        }
      } catch (Exception e) {
        failed++;
        Throwable root = e;
        while (root.getCause() != null) {
          root = root.getCause();
        }
        verdict = "FAIL " + job + ": " + e + (root != e ? "\n    caused by: " + root : "");
      }
      out.println(verdict + String.format(" (%.1f s)", (System.nanoTime() - t0) / 1e9));
      out.flush();
    }
    out.println(passed + " passed, " + failed + " failed" + (skipped > 0 ? " (" + skipped + " skipped)" : ""));
    if (passed < expectPassed) {
      out.println("expected at least " + expectPassed + " passed");
      return 1;
    }
    return failed == 0 ? 0 : 1;
  }

  private static final class Result {
    final int status; // 0 pass, 1 fail, 2 skip
    final String verdict;

    Result(int status, String verdict) {
      this.status = status;
      this.verdict = verdict;
    }
  }

  private static Result runOne(String job, String tidemark) throws Exception {
    // 1. The export.
    Process p = new ProcessBuilder(tidemark, "export", "--flink-sql", job).start();
    String script = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      String first = err.strip().split("\n")[0];
      return new Result(2, "SKIP " + job + ": export needs --best-effort: " + first);
    }
    // Only files are read here: a connector that needs a service (kafka) would wait for it.
    Matcher c = CONNECTOR.matcher(script);
    while (c.find()) {
      if (!c.group(1).equals("filesystem") && !c.group(1).equals("print")) {
        return new Result(2, "SKIP " + job + ": connector '" + c.group(1) + "' needs a running service (only files are read here)");
      }
    }
    // 2. tidemark's own rows.
    StringBuilder why = new StringBuilder();
    List<String> expected = TidemarkRows.runTidemark(tidemark, job, why);
    if (expected == null) {
      return new Result(1, "FAIL " + job + ": " + why);
    }
    // 3. Flink's.
    List<String> actual = execute(script);
    String diff = TidemarkRows.compare(actual, expected);
    if (diff == null) {
      return new Result(0, "PASS " + job + ": " + actual.size() + " rows equal");
    }
    return new Result(1, "FAIL " + job + ": rows differ\n" + diff.stripTrailing());
  }

  /** Runs the script; the rows its INSERTs write, formatted as tidemark's print sink. */
  static List<String> execute(String script) throws Exception {
    TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    env.getConfig().set("parallelism.default", "1");
    env.getConfig().set("rest.bind-address", "127.0.0.1");
    List<String[]> inserts = new ArrayList<>();
    for (String statement : statements(script)) {
      String s = statement.strip();
      String upper = s.toUpperCase();
      if (upper.startsWith("EXECUTE STATEMENT SET")) {
        String body = s.replaceFirst("(?is)^EXECUTE\\s+STATEMENT\\s+SET\\s+BEGIN", "")
            .replaceFirst("(?is)END\\s*$", "");
        for (String insert : statements(body)) {
          inserts.add(parseInsert(insert.strip()));
        }
      } else if (upper.startsWith("SET")) {
        // The SQL client's SET (TableEnvironment.executeSql does not take it): a configuration option.
        Matcher m = SET.matcher(s);
        if (!m.matches()) {
          throw new IllegalArgumentException("not a SET 'key' = 'value': " + s);
        }
        env.getConfig().set(m.group(1), m.group(2));
      } else if (upper.startsWith("INSERT")) {
        inserts.add(parseInsert(s));
      } else {
        env.executeSql(s);
      }
    }
    List<String> rows = new ArrayList<>();
    for (String[] insert : inserts) {
      List<String> names = env.from(insert[0]).getResolvedSchema().getColumnNames();
      TableResult result = env.sqlQuery(insert[1]).execute();
      try (CloseableIterator<Row> it = result.collect()) {
        while (it.hasNext()) {
          Row row = it.next();
          if (row.getKind() != RowKind.INSERT) {
            throw new IllegalStateException("the query into " + insert[0] + " updates (" + row.getKind() + " " + row + "); tidemark's print sink only appends");
          }
          List<Object> values = new ArrayList<>();
          for (int i = 0; i < row.getArity(); i++) {
            values.add(row.getField(i));
          }
          rows.add(TidemarkRows.format(names, values));
        }
      }
    }
    return rows;
  }

  private static String[] parseInsert(String insert) {
    Matcher m = INSERT.matcher(insert);
    if (!m.matches()) {
      throw new IllegalArgumentException("not an INSERT INTO ... SELECT: " + insert);
    }
    return new String[] {m.group(1), m.group(2)};
  }

  /** The statements of a script: split at ';' outside quotes, backquotes and -- comments. */
  static List<String> statements(String script) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    int depth = 0; // BEGIN ... END of a statement set holds ';'
    int i = 0;
    while (i < script.length()) {
      char c = script.charAt(i);
      if (c == '-' && i + 1 < script.length() && script.charAt(i + 1) == '-') {
        int nl = script.indexOf('\n', i);
        i = nl < 0 ? script.length() : nl + 1;
        cur.append('\n');
        continue;
      }
      if (c == '\'' || c == '`' || c == '"') {
        int j = i + 1;
        while (j < script.length()) {
          if (script.charAt(j) == c) {
            if (j + 1 < script.length() && script.charAt(j + 1) == c) {
              j += 2;
              continue;
            }
            break;
          }
          j++;
        }
        cur.append(script, i, Math.min(j + 1, script.length()));
        i = j + 1;
        continue;
      }
      if (Character.isLetter(c) && (i == 0 || !Character.isLetterOrDigit(script.charAt(i - 1)))) {
        int j = i;
        while (j < script.length() && Character.isLetterOrDigit(script.charAt(j))) {
          j++;
        }
        String word = script.substring(i, j).toUpperCase();
        if (word.equals("BEGIN") && cur.toString().strip().toUpperCase().startsWith("EXECUTE")) {
          depth++;
        } else if (word.equals("END") && depth > 0) {
          depth--;
        }
        cur.append(script, i, j);
        i = j;
        continue;
      }
      if (c == ';' && depth == 0) {
        if (!cur.toString().isBlank()) {
          out.add(cur.toString());
        }
        cur.setLength(0);
        i++;
        continue;
      }
      cur.append(c);
      i++;
    }
    if (!cur.toString().isBlank()) {
      out.add(cur.toString());
    }
    return out;
  }

}
