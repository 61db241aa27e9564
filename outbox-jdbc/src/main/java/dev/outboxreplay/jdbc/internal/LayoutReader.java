package dev.outboxreplay.jdbc.internal;

import dev.outboxreplay.OutboxStorageException;
import dev.outboxreplay.jdbc.JdbcDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code JdbcOutboxStore.layout} reads of a file: its tables, each with the lower-case name
 * of the table it is or, for a copy an interrupted rebuild left ({@code Dialect.rebuiltTable}),
 * the table it holds the rows of. An engine that commits each DDL statement by itself (H2) can
 * leave a migration's first tables made and none of it recorded, or a table's rows under its
 * copy's name. Reads only.
 */
public final class LayoutReader {
  private final Connection c;
  private final JdbcDatabase database;
  /** Each table's name in the file, with the library table it is or holds the rows of. */
  private final Map<String, String> tables;

  private LayoutReader(Connection c, JdbcDatabase database, Map<String, String> tables) {
    this.c = c;
    this.database = database;
    this.tables = tables;
  }

  /** Lists the tables of the file {@code c} is connected to. */
  public static LayoutReader read(Connection c, JdbcDatabase database) throws SQLException {
    Map<String, String> tables = new LinkedHashMap<>();
    try (ResultSet rs = c.getMetaData().getTables(null, null, "%", new String[] {"TABLE"})) {
      while (rs.next()) {
        String schema = rs.getString("TABLE_SCHEM");
        String name = rs.getString("TABLE_NAME");
        if ("INFORMATION_SCHEMA".equalsIgnoreCase(schema)
            || name.toLowerCase(Locale.ROOT).startsWith("sqlite_")) {
          continue;
        }
        tables.put(name,
            database.dialect().rebuiltTable(name).orElse(name).toLowerCase(Locale.ROOT));
      }
    }
    return new LayoutReader(c, database, tables);
  }

  /** True when every table is the library's (or a copy of one): a file of these is its own. */
  public boolean onlyTheLibrarysTables() {
    return tables.values().stream().allMatch(OutboxTables.LIBRARY_TABLES::contains);
  }

  /**
   * The commands the file holds, read from {@code outbox_command} or, when an interrupted rebuild
   * left its rows under a copy's name, from the fullest copy; 0 when neither was made yet.
   *
   * @throws OutboxStorageException when layout version {@code installed} (above 0) is recorded
   *     and there is no command table at all
   */
  public long commandRows(int installed) throws SQLException {
    long rows = 0;
    boolean seen = false;
    for (Map.Entry<String, String> table : tables.entrySet()) {
      if (!table.getValue().equals("outbox_command")) {
        continue;
      }
      seen = true;
      try (Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM \"" + table.getKey() + "\"")) {
        rs.next();
        rows = Math.max(rows, rs.getLong(1));
      }
    }
    if (!seen && installed > 0) {
      throw new OutboxStorageException("cannot read outbox database " + database.file()
          + ": its layout version is " + installed + " but it has no outbox_command table; "
          + "something other than this library changed it");
    }
    return rows;
  }
}
