package dev.outboxreplay.h2.internal;

import dev.outboxreplay.OutboxStorageException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What H2's table rebuilds leave when their process is killed. H2 runs {@code ALTER TABLE ... ADD
 * COLUMN} and {@code DROP COLUMN} in commits of their own ({@code AlterTableAlterColumn.copyData}):
 * create {@code NAME_COPY_<session>_<n>} with the new columns and every index and constraint
 * named {@code NAME_COPY_<session>_<n>_<name>}, copy the rows, drop {@code NAME}, rename the copy
 * to {@code NAME}, then rename its indexes and constraints. Killed before the drop, the file holds
 * {@code NAME} with every row and a copy beside it; killed after it, the rows are only in the copy
 * and every statement on {@code NAME} fails ("Table OUTBOX_COMMAND not found") until the copy is
 * renamed back. Seen when a process creating a new file was killed within its first two seconds
 * ({@code KilledReplayLocksNoOneOutTest}), and possible for any upgrade of an older file.
 */
final class InterruptedRebuilds {
  private static final Pattern COPY = Pattern.compile("(.+)_COPY_\\d+_\\d+",
      Pattern.CASE_INSENSITIVE);

  private InterruptedRebuilds() {}

  /** The table a copy named {@code name} was made for, or empty when {@code name} is no copy. */
  static Optional<String> rebuiltTable(String name) {
    Matcher m = COPY.matcher(name);
    return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /** See {@link dev.outboxreplay.jdbc.Dialect#finishInterruptedRebuilds}. */
  static void finish(Connection c, Set<String> tables) throws SQLException {
    Map<String, String> present = new LinkedHashMap<>(); // upper-case name -> name
    Map<String, List<String>> copies = new LinkedHashMap<>(); // table -> its copies
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES "
            + "WHERE TABLE_SCHEMA = SCHEMA() AND TABLE_TYPE = 'BASE TABLE'")) {
      while (rs.next()) {
        String name = rs.getString(1);
        present.put(name.toUpperCase(Locale.ROOT), name);
        rebuiltTable(name).map(t -> t.toLowerCase(Locale.ROOT)).filter(tables::contains)
            .ifPresent(t -> copies.computeIfAbsent(t, k -> new ArrayList<>()).add(name));
      }
    }
    for (Map.Entry<String, List<String>> e : copies.entrySet()) {
      String table = e.getKey().toUpperCase(Locale.ROOT);
      List<String> left = e.getValue();
      if (present.containsKey(table)) {
        // killed before the drop: the table holds every row, the copy is a leftover
        for (String copy : left) {
          execute(c, "DROP TABLE " + quote(copy));
        }
      } else if (left.size() == 1) {
        execute(c, "ALTER TABLE " + quote(left.get(0)) + " RENAME TO " + quote(table));
      } else {
        throw new OutboxStorageException("cannot finish the interrupted rebuilds of table "
            + table + ": it is gone and " + left.size() + " copies of it are left (" + left
            + "), and nothing tells which is the newer; nothing was changed. Keep the file, "
            + "and report it with the output of SCRIPT NODATA");
      }
    }
    for (String table : tables) {
      String upper = table.toUpperCase(Locale.ROOT);
      if (present.containsKey(upper) || copies.containsKey(table)) {
        renameCopyNamedChildren(c, upper);
      }
    }
  }

  /**
   * Gives {@code table}'s constraints and indexes still named after a copy their own names back:
   * the migrations find them by name ({@code DROP INDEX IF EXISTS idx_outbox_claim}).
   */
  private static void renameCopyNamedChildren(Connection c, String table) throws SQLException {
    for (String[] named : copyNamed(c, "SELECT CONSTRAINT_NAME FROM "
        + "INFORMATION_SCHEMA.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = SCHEMA() AND TABLE_NAME = ?",
        table)) {
      if (!exists(c, "SELECT 1 FROM INFORMATION_SCHEMA.TABLE_CONSTRAINTS "
          + "WHERE CONSTRAINT_SCHEMA = SCHEMA() AND CONSTRAINT_NAME = ?", named[1])) {
        execute(c, "ALTER TABLE " + quote(table) + " RENAME CONSTRAINT " + quote(named[0])
            + " TO " + quote(named[1]));
      }
    }
    for (String[] named : copyNamed(c, "SELECT INDEX_NAME FROM INFORMATION_SCHEMA.INDEXES "
        + "WHERE TABLE_SCHEMA = SCHEMA() AND TABLE_NAME = ?", table)) {
      if (!exists(c, "SELECT 1 FROM INFORMATION_SCHEMA.INDEXES "
          + "WHERE INDEX_SCHEMA = SCHEMA() AND INDEX_NAME = ?", named[1])) {
        execute(c, "ALTER INDEX " + quote(named[0]) + " RENAME TO " + quote(named[1]));
      }
    }
  }

  /** Each name {@code query} lists that starts with a copy's prefix, with that prefix removed. */
  private static List<String[]> copyNamed(Connection c, String query, String table)
      throws SQLException {
    Pattern prefixed = Pattern.compile(Pattern.quote(table) + "_COPY_\\d+_\\d+_(.+)",
        Pattern.CASE_INSENSITIVE);
    List<String[]> names = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(query)) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Matcher m = prefixed.matcher(rs.getString(1));
          if (m.matches()) {
            names.add(new String[] {rs.getString(1), m.group(1)});
          }
        }
      }
    }
    return names;
  }

  private static boolean exists(Connection c, String query, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(query)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static String quote(String name) {
    return '"' + name.replace("\"", "\"\"") + '"';
  }
}
