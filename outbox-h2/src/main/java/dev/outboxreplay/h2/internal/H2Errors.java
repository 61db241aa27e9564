package dev.outboxreplay.h2.internal;

import dev.outboxreplay.OutboxStorageException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.regex.Pattern;

/** Translates H2 failures into {@link OutboxStorageException}s that name the file and a remedy. */
public final class H2Errors {
  /** H2: unique index or primary key violated. */
  public static final String UNIQUE_VIOLATION_STATE = "23505";
  private static final int DATABASE_ALREADY_OPEN = 90020;
  /** H2's "The database is read only": a read-only open that H2 could finish only by writing. */
  private static final int DATABASE_IS_READ_ONLY = 90097;
  private static final int FILE_CORRUPTED = 90030;
  private static final int FILE_VERSION_ERROR = 90048;
  private static final int DATABASE_NOT_FOUND = 90146;
  private static final int LOCK_TIMEOUT = 50200;
  private static final int ERROR_OPENING_DATABASE = 8000;
  private static final int DEADLOCK = 40001;
  private static final int CONNECTION_BROKEN = 90067;
  private static final int DATABASE_IS_CLOSED = 90098;
  private static final int DATABASE_CALLED_AT_SHUTDOWN = 90121;
  private static final int CONCURRENT_UPDATE = 90131;
  private static final int GENERAL_ERROR = 50000;
  private static final int STATEMENT_WAS_CANCELED = 57014;
  private static final int DATABASE_IS_IN_EXCLUSIVE_MODE = 90135;
  /** H2's client session class, where a {@code NullPointerException} means its own close. */
  private static final String REMOTE_SESSION = "org.h2.engine.SessionRemote";
  /**
   * H2's message for a statement whose session the closing database closed under it: closing a
   * session clears its user and database ({@code SessionLocal.close}), and the running statement
   * then fails on them. Seen over the network, so only the message says it.
   */
  private static final Pattern SESSION_CLOSED_UNDER_STATEMENT = Pattern.compile(
      "NullPointerException: .*\"\"org\\.h2\\.engine\\.SessionLocal\\.get(User|Database)\\(\\)\"\" "
      + "is null");
  /**
   * H2's storage engine's "Transaction N has status ROLLED_BACK, not OPEN" (its error 103, which
   * H2 puts in the message as {@code [version/103]}): what a statement gets when the database
   * closes under it and rolls its session's transaction back.
   */
  private static final Pattern TRANSACTION_NOT_OPEN = Pattern.compile(
      "has status (ROLLING_BACK|ROLLED_BACK|CLOSED), not OPEN \\[[^\\]/]*/103]");

  private H2Errors() {}

  /** Failure while opening {@code file}. */
  public static OutboxStorageException onOpen(Path file, Throwable failure) {
    SQLException sql = findSqlException(failure);
    String reason;
    if (sql == null) {
      reason = String.valueOf(failure.getMessage());
    } else {
      reason = switch (sql.getErrorCode()) {
        case DATABASE_ALREADY_OPEN -> "it is locked by another process; close that process, "
            + "or open both with multiProcess(true)";
        case FILE_CORRUPTED -> "the file is corrupt; it was left untouched for inspection "
            + "(restore it from a backup, or move it away to start empty)";
        case FILE_VERSION_ERROR -> "the file was written by an incompatible H2 version";
        case DATABASE_NOT_FOUND -> "the file does not exist";
        default -> firstLine(sql.getMessage());
      };
    }
    return new OutboxStorageException("cannot open database file " + file + ": " + reason,
        failure, sql != null && isOpenRace(sql));
  }

  /**
   * {@code failure}, an open of {@code file} that a lock refused, told again with who holds the
   * lock, from a look at its owner now: a live owner is named; an owner gone since makes it
   * retryable. Call it once nothing of this JVM's own open holds the file any more.
   */
  public static OutboxStorageException lockedBy(Path file, OutboxStorageException failure) {
    LockOwner.Found owner = LockOwner.of(file);
    String reason = switch (owner.state()) {
      case HELD -> "it is locked by another process: " + owner.description() + "; close that "
          + "process, or open both with multiProcess(true)";
      case GONE -> "it was locked by a process that is gone (" + owner.description() + "); "
          + "open it again: the next open takes the lock over";
      case NONE -> "another process had it locked and has let go of it since; open it again";
    };
    return new OutboxStorageException("cannot open database file " + file + ": " + reason,
        failure.getCause(), owner.state() != LockOwner.State.HELD || failure.retryable());
  }

  /** True when {@code failure} (or a cause) is H2's "The database is read only" (90097). */
  public static boolean isReadOnlyRefusal(Throwable failure) {
    SQLException sql = findSqlException(failure);
    return sql != null && sql.getErrorCode() == DATABASE_IS_READ_ONLY;
  }

  /**
   * True when {@code failure} (or a cause) is H2's "database may be already in use" (90020): a
   * live process holds the file's lock.
   */
  public static boolean isLockedByAnother(Throwable failure) {
    SQLException sql = findSqlException(failure);
    return sql != null && sql.getErrorCode() == DATABASE_ALREADY_OPEN;
  }

  /**
   * True for H2's lock-file races when several processes open one file at the same moment
   * ("Another process was faster", "Concurrent update", "Lock file recently modified"): opening
   * again shortly succeeds.
   */
  public static boolean isOpenRace(SQLException e) {
    return e.getErrorCode() == ERROR_OPENING_DATABASE;
  }

  /**
   * True for H2's "database may be already in use" (90020) when the holder named no server to
   * reach it by. In multi-process mode that is also a passing state: another process has just
   * created the lock file and not yet started the server it writes there, or is closing and has
   * not yet let go of the data file. (A process that opened the file in single-process mode gives
   * the same error for as long as it runs; it is reported once the open bound is over.)
   */
  public static boolean isLockedWithoutServer(SQLException e) {
    return e.getErrorCode() == DATABASE_ALREADY_OPEN;
  }

  /**
   * True when the connection is dead because the database it reached is gone: the process
   * serving a shared file closed or died. The pool must not hand that connection out again; a
   * new one reaches the process that took the file over. This includes a statement whose
   * transaction the closing database rolled back while it ran (H2 reports that as a general
   * error, "Transaction N has status ROLLED_BACK, not OPEN"): nothing of that transaction was
   * committed, and the session is being closed. It also includes a statement H2 canceled: the
   * library sets no query timeouts and cancels nothing, so that is the closing database
   * cancelling what its sessions run before it closes them. And it includes H2's client failing
   * on its own closed session (a general error caused by a {@code NullPointerException} in
   * {@code org.h2.engine.SessionRemote}): the serving process answered that it closed the
   * session, H2 dropped the session's connections, and the next broken write then found none.
   * It includes a statement that failed because the closing database closed its session under
   * it (a general error quoting a {@code NullPointerException} on {@code SessionLocal.getUser()}
   * or {@code getDatabase()}, which closing clears; seen when a process connected just as the
   * serving one closed). Last, it includes "the database is in exclusive mode" (90135): H2
   * reports it for a statement that ended after the serving process's {@code SHUTDOWN} marked
   * its session for closing. That statement ran to its end (a commit did commit); the session is
   * closed. The calls the library runs again are the ones safe to run again after a commit that
   * did happen ({@link Handover}).
   */
  public static boolean isBrokenConnection(SQLException e) {
    for (SQLException s = e; s != null; s = s.getNextException()) {
      int code = s.getErrorCode();
      if (code == CONNECTION_BROKEN || code == DATABASE_IS_CLOSED
          || code == DATABASE_CALLED_AT_SHUTDOWN || code == STATEMENT_WAS_CANCELED
          || code == DATABASE_IS_IN_EXCLUSIVE_MODE) {
        return true;
      }
      if (code == GENERAL_ERROR && s.getMessage() != null
          && (TRANSACTION_NOT_OPEN.matcher(s.getMessage()).find()
          || SESSION_CLOSED_UNDER_STATEMENT.matcher(s.getMessage()).find())) {
        return true;
      }
      if (code == GENERAL_ERROR && failedInClosedRemoteSession(s.getCause())) {
        return true;
      }
      if (s.getNextException() == s) {
        break;
      }
    }
    return false;
  }

  /** True for a {@code NullPointerException} thrown by H2's client session itself. */
  private static boolean failedInClosedRemoteSession(Throwable cause) {
    if (!(cause instanceof NullPointerException)) {
      return false;
    }
    StackTraceElement[] frames = cause.getStackTrace();
    return frames.length > 0 && frames[0].getClassName().equals(REMOTE_SESSION);
  }

  /** True when the failed statement may succeed if run again shortly. */
  static boolean isRetryable(SQLException e) {
    int code = e.getErrorCode();
    String state = e.getSQLState();
    return code == LOCK_TIMEOUT || code == DEADLOCK || code == CONCURRENT_UPDATE
        || isBrokenConnection(e) || e instanceof java.sql.SQLTransientException
        // SQL state class 08, connection exception: the pool closed a broken connection
        || (state != null && state.startsWith("08"));
  }

  /** Failure of a statement on an open database. */
  public static OutboxStorageException onStatement(Path file, String action, SQLException e) {
    String reason = e.getErrorCode() == LOCK_TIMEOUT
        ? "timed out waiting for a row lock held by another transaction"
        : firstLine(e.getMessage());
    return new OutboxStorageException(action + " failed on " + file + ": " + reason, e,
        isRetryable(e));
  }

  /** True when {@code e} reports a unique or primary key violation. */
  public static boolean isUniqueViolation(SQLException e) {
    return UNIQUE_VIOLATION_STATE.equals(e.getSQLState());
  }

  private static SQLException findSqlException(Throwable t) {
    for (Throwable cause = t; cause != null; cause = cause.getCause()) {
      if (cause instanceof SQLException sql) {
        return sql;
      }
      if (cause.getCause() == cause) {
        break;
      }
    }
    return null;
  }

  /** The first line of an H2 message (H2 appends the statement on later lines). */
  static String firstLine(String message) {
    if (message == null) {
      return "unknown error";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
