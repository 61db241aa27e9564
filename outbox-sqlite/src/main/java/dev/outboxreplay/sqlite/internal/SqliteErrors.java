package dev.outboxreplay.sqlite.internal;

import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;
import java.sql.SQLException;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/** Translates SQLite failures into {@link OutboxStorageException}s naming the file and a remedy. */
public final class SqliteErrors {
  private SqliteErrors() {}

  /**
   * True when another connection (of this process or another) holds the lock the statement
   * needed for longer than the busy timeout, or wrote since this transaction read: trying again
   * passes.
   */
  public static boolean isBusy(SQLException e) {
    SQLiteErrorCode code = code(e);
    return code != null && (code == SQLiteErrorCode.SQLITE_BUSY
        || code == SQLiteErrorCode.SQLITE_BUSY_SNAPSHOT
        || code == SQLiteErrorCode.SQLITE_BUSY_RECOVERY
        || code == SQLiteErrorCode.SQLITE_BUSY_TIMEOUT
        || code == SQLiteErrorCode.SQLITE_LOCKED
        || code == SQLiteErrorCode.SQLITE_LOCKED_SHAREDCACHE);
  }

  /** True for a unique index or primary key violation. */
  public static boolean isUniqueViolation(SQLException e) {
    SQLiteErrorCode code = code(e);
    return code == SQLiteErrorCode.SQLITE_CONSTRAINT_UNIQUE
        || code == SQLiteErrorCode.SQLITE_CONSTRAINT_PRIMARYKEY
        || (code == SQLiteErrorCode.SQLITE_CONSTRAINT && e.getMessage() != null
            && e.getMessage().contains("UNIQUE constraint failed"));
  }

  /** The first busy failure in {@code failure}'s causes, or null. */
  public static SQLException busyCause(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && isBusy(sql)) {
        return sql;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }

  /** A statement's failure, naming {@code file} and {@code action}. */
  public static OutboxStorageException onStatement(Path file, String action, SQLException e) {
    return new OutboxStorageException(action + " failed on " + file + ": " + reason(e), e,
        isBusy(e));
  }

  /** What {@code e} means for the file, in words. */
  public static String reason(SQLException e) {
    SQLiteErrorCode code = code(e);
    if (code == null) {
      return firstLine(e.getMessage());
    }
    return switch (code) {
      case SQLITE_BUSY, SQLITE_BUSY_TIMEOUT, SQLITE_BUSY_RECOVERY, SQLITE_LOCKED ->
          "another process held the file's write lock for longer than the busy timeout";
      case SQLITE_BUSY_SNAPSHOT ->
          "another process wrote the file while this transaction read it; run it again";
      case SQLITE_FULL -> "the disk is full";
      case SQLITE_READONLY -> "the file is read-only for this process";
      case SQLITE_CORRUPT, SQLITE_NOTADB -> "the file is damaged (" + firstLine(e.getMessage())
          + "); restore it from a backup";
      default -> firstLine(e.getMessage());
    };
  }

  private static SQLiteErrorCode code(SQLException e) {
    if (e instanceof SQLiteException sqlite) {
      SQLiteErrorCode code = sqlite.getResultCode();
      return code;
    }
    return null;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unknown error";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
