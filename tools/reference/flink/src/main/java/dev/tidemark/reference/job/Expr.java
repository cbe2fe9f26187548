package dev.tidemark.reference.job;

import java.io.Serializable;
import java.util.List;
import java.util.Map;

/**
 * tidemark's expression language (docs/job-reference.md "Expressions", operators/expression.h),
 * evaluated over a row map: {@code || && ! == != < <= > >= + - * / %} (also {@code or and not}
 * in any case, and Flink SQL's {@code = <>}), unary minus, integer,
 * decimal, string and bool literals, field names and backquoted names. int64 and timestamps are
 * Longs (integer arithmetic, division truncating), an integer with a double gives a double, {@code +}
 * joins strings. A NULL operand makes the result NULL (the logical operators follow SQL's
 * three-valued logic: false AND NULL is false, true OR NULL is true); integer division by zero is
 * NULL.
 */
public final class Expr implements Serializable {
  private static final long serialVersionUID = 1L;

  /** A parsed node: op with children, or a leaf (field name / literal). */
  private final String op;
  private final Object literal;
  private final String field;
  private final Expr[] args;

  private Expr(String op, Object literal, String field, Expr... args) {
    this.op = op;
    this.literal = literal;
    this.field = field;
    this.args = args;
  }

  public static Expr parse(String text) {
    Parser p = new Parser(text);
    Expr e = p.or();
    p.skip();
    if (p.pos != text.length()) {
      throw new IllegalArgumentException("expression \"" + text + "\": unexpected '" + text.substring(p.pos) + "'");
    }
    return e;
  }

  /** The fields it reads. */
  public void fields(List<String> out) {
    if (field != null) {
      out.add(field);
    }
    for (Expr a : args) {
      a.fields(out);
    }
  }

  public Object eval(Map<String, Object> row) {
    switch (op) {
      case "lit":
        return literal;
      case "field":
        return row.get(field);
      case "||":
      case "&&":
        {
          // SQL's three-valued logic, as tidemark and Flink: false AND NULL is false, true OR
          // NULL is true, otherwise a NULL operand makes NULL.
          Boolean a = (Boolean) args[0].eval(row);
          Boolean b = (Boolean) args[1].eval(row);
          boolean and = op.equals("&&");
          if (Boolean.valueOf(!and).equals(a) || Boolean.valueOf(!and).equals(b)) {
            return !and;
          }
          if (a == null || b == null) {
            return null;
          }
          return and ? a && b : a || b;
        }
      case "!":
        {
          Object a = args[0].eval(row);
          return a == null ? null : !(Boolean) a;
        }
      case "neg":
        {
          Object a = args[0].eval(row);
          if (a == null) {
            return null;
          }
          return a instanceof Long ? (Object) (-(Long) a) : (Object) (-(Double) a);
        }
      default:
        break;
    }
    Object a = args[0].eval(row);
    Object b = args[1].eval(row);
    if (a == null || b == null) {
      return null;
    }
    switch (op) {
      case "==":
      case "!=":
      case "<":
      case "<=":
      case ">":
      case ">=":
        {
          int c;
          if (a instanceof Number && b instanceof Number) {
            c = (a instanceof Long && b instanceof Long)
                ? Long.compare((Long) a, (Long) b)
                : Double.compare(((Number) a).doubleValue(), ((Number) b).doubleValue());
          } else if (a instanceof String && b instanceof String) {
            c = compareBytes((String) a, (String) b);
          } else if (a instanceof Boolean && b instanceof Boolean) {
            c = Boolean.compare((Boolean) a, (Boolean) b);
          } else {
            throw new IllegalArgumentException("cannot compare " + a + " and " + b);
          }
          switch (op) {
            case "==":
              return c == 0;
            case "!=":
              return c != 0;
            case "<":
              return c < 0;
            case "<=":
              return c <= 0;
            case ">":
              return c > 0;
            default:
              return c >= 0;
          }
        }
      case "+":
        if (a instanceof String) {
          return (String) a + b;
        }
        // fall through
      case "-":
      case "*":
      case "/":
      case "%":
        if (a instanceof Long && b instanceof Long) {
          long x = (Long) a;
          long y = (Long) b;
          switch (op) {
            case "+":
              return x + y;
            case "-":
              return x - y;
            case "*":
              return x * y;
            case "/":
              return y == 0 ? null : x / y;
            default:
              return y == 0 ? null : x % y;
          }
        }
        {
          double x = ((Number) a).doubleValue();
          double y = ((Number) b).doubleValue();
          switch (op) {
            case "+":
              return x + y;
            case "-":
              return x - y;
            case "*":
              return x * y;
            case "/":
              return x / y;
            default:
              return x % y;
          }
        }
      default:
        throw new IllegalStateException(op);
    }
  }

  /** std::string's comparison: bytes, unsigned (UTF-8). */
  static int compareBytes(String a, String b) {
    byte[] x = a.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] y = b.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return java.util.Arrays.compareUnsigned(x, y);
  }

  private static final class Parser {
    final String s;
    int pos;

    Parser(String s) {
      this.s = s;
    }

    void skip() {
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
        pos++;
      }
    }

    boolean eat(String t) {
      skip();
      // Words (and, or, not) in any case, as tidemark reads SQL words (AND, Or, ...).
      if (s.regionMatches(Character.isLetter(t.charAt(0)), pos, t, 0, t.length())) {
        // "=" must not take the first char of "==" etc.: callers try longer tokens first.
        if (Character.isLetter(t.charAt(0))) {
          int end = pos + t.length();
          if (end < s.length() && (Character.isLetterOrDigit(s.charAt(end)) || s.charAt(end) == '_')) {
            return false;
          }
        }
        pos += t.length();
        return true;
      }
      return false;
    }

    Expr or() {
      Expr e = and();
      while (eat("||") || eat("or")) {
        e = new Expr("||", null, null, e, and());
      }
      return e;
    }

    Expr and() {
      Expr e = not();
      while (eat("&&") || eat("and")) {
        e = new Expr("&&", null, null, e, not());
      }
      return e;
    }

    Expr not() {
      skip();
      if (s.startsWith("!=", pos)) {
        return cmp();
      }
      if (eat("!") || eat("not")) {
        return new Expr("!", null, null, not());
      }
      return cmp();
    }

    Expr cmp() {
      Expr e = add();
      // Flink SQL's spellings too: `=` is `==`, `<>` is `!=` (longer tokens first).
      for (String o : new String[] {"==", "!=", "<>", "<=", ">=", "<", ">", "="}) {
        if (eat(o)) {
          String canonical = o.equals("=") ? "==" : o.equals("<>") ? "!=" : o;
          return new Expr(canonical, null, null, e, add());
        }
      }
      return e;
    }

    Expr add() {
      Expr e = mul();
      while (true) {
        if (eat("+")) {
          e = new Expr("+", null, null, e, mul());
        } else if (eat("-")) {
          e = new Expr("-", null, null, e, mul());
        } else {
          return e;
        }
      }
    }

    Expr mul() {
      Expr e = unary();
      while (true) {
        if (eat("*")) {
          e = new Expr("*", null, null, e, unary());
        } else if (eat("/")) {
          e = new Expr("/", null, null, e, unary());
        } else if (eat("%")) {
          e = new Expr("%", null, null, e, unary());
        } else {
          return e;
        }
      }
    }

    Expr unary() {
      if (eat("-")) {
        return new Expr("neg", null, null, unary());
      }
      return primary();
    }

    Expr primary() {
      skip();
      if (pos >= s.length()) {
        throw new IllegalArgumentException("expression \"" + s + "\": unexpected end");
      }
      char c = s.charAt(pos);
      if (c == '(') {
        pos++;
        Expr e = or();
        if (!eat(")")) {
          throw new IllegalArgumentException("expression \"" + s + "\": ')' expected");
        }
        return e;
      }
      if (c == '"' || c == '\'') {
        StringBuilder b = new StringBuilder();
        pos++;
        while (pos < s.length() && s.charAt(pos) != c) {
          if (s.charAt(pos) == '\\' && pos + 1 < s.length()) {
            pos++;
          }
          b.append(s.charAt(pos++));
        }
        pos++;
        return new Expr("lit", b.toString(), null);
      }
      if (c == '`') {
        int end = s.indexOf('`', pos + 1);
        String name = s.substring(pos + 1, end);
        pos = end + 1;
        return new Expr("field", null, name);
      }
      if (Character.isDigit(c)) {
        int start = pos;
        while (pos < s.length() && (Character.isDigit(s.charAt(pos)) || s.charAt(pos) == '.')) {
          pos++;
        }
        String num = s.substring(start, pos);
        return new Expr("lit", num.contains(".") ? (Object) Double.parseDouble(num) : (Object) Long.parseLong(num), null);
      }
      if (Character.isLetter(c) || c == '_') {
        int start = pos;
        while (pos < s.length() && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '_')) {
          pos++;
        }
        String name = s.substring(start, pos);
        if (name.equals("true") || name.equals("false")) {
          return new Expr("lit", Boolean.valueOf(name), null);
        }
        return new Expr("field", null, name);
      }
      throw new IllegalArgumentException("expression \"" + s + "\": unexpected '" + c + "'");
    }
  }

}
