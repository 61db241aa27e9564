package dev.outboxreplay.h2.internal;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.h2.engine.Database;
import org.h2.engine.SessionLocal;
import org.h2.jdbcx.JdbcDataSource;

/**
 * Where the pool gets its physical connections: H2's own data source, opened again through
 * {@link Handover#retry} (pauses of 10 ms doubling to 200 ms) while another process is opening, or
 * taking over, the same file (H2's lock-file races, a server that went away). Without it, the
 * pool's own retry backs off from 10 ms doubling to 5 s, so a file taken over after 1.5 s was
 * reached only after 2.6 or 5.1 s. A failure that is not such a race, or one that lasts longer
 * than the open wait it is given (by default {@link Handover#RETRY_FOR}), is thrown as it is.
 */
public final class RetryingOpenDataSource implements DataSource {
  private final JdbcDataSource h2 = new JdbcDataSource();
  /** Failures retried besides handovers (see the constructor's {@code multiProcess}). */
  private final java.util.function.Predicate<SQLException> alsoRetry;
  private volatile int loginTimeoutSeconds;
  /** The database the latest connection that opened the file in this JVM reached; or null. */
  private final java.util.concurrent.atomic.AtomicReference<Database> openedHere =
      new java.util.concurrent.atomic.AtomicReference<>();
  /** How long an open keeps retrying after its first failure. */
  private final java.time.Duration openWait;

  /**
   * @param url the H2 URL (with {@code CIPHER=AES} when {@code fileKey} is given)
   * @param fileKey the file encryption password, or null for a plain file; copied
   * @param multiProcess whether the URL opens the file in H2's multi-process mode; then a file
   *     locked by a process that names no server yet is opened again too ({@link
   *     H2Errors#isLockedWithoutServer}), as that process is starting or closing
   * @param openWait how long an open keeps retrying after its first failure
   */
  public RetryingOpenDataSource(String url, char[] fileKey, boolean multiProcess,
      java.time.Duration openWait) {
    this.openWait = java.util.Objects.requireNonNull(openWait, "openWait == null");
    this.alsoRetry = multiProcess ? H2Errors::isLockedWithoutServer : e -> false;
    h2.setURL(url);
    h2.setUser("sa");
    if (fileKey == null) {
      h2.setPassword("");
    } else {
      // H2 splits the password at the first space: the file password, then the user's (empty)
      char[] password = java.util.Arrays.copyOf(fileKey, fileKey.length + 1);
      password[fileKey.length] = ' ';
      h2.setPasswordChars(password);
    }
  }

  @Override
  public Connection getConnection() throws SQLException {
    // A connection may be the one that takes the file over after the process serving it was
    // killed: H2 then runs its recovery inside this call, and RecoveringFileSystem (in the URL)
    // repairs the store header first, under H2's lock.
    Connection c = Handover.retry(() -> usable(h2.getConnection()), alsoRetry, openWait);
    SessionLocal local = ServedHere.localSession(c);
    if (local != null) {
      // Not cleared by a later connection that goes through a server (ServedFileCloseTest saw
      // one during a takeover, in a full module run): once the database here closes, it says
      // so itself (othersSessions is then 0).
      openedHere.set(local.getDatabase());
    }
    return c;
  }

  /**
   * {@code c} once one round trip on it worked; else closed, and the failure thrown. A process
   * that connects through another's server just as that one closes can get a connection whose
   * session is already gone: the pool's first statement on it then failed ("The database has
   * been closed", in {@code InboxCrashTest}) outside this source's retry, and the open failed.
   */
  private static Connection usable(Connection c) throws SQLException {
    try {
      c.getTransactionIsolation(); // what the pool asks first; a round trip to the server
      return c;
    } catch (SQLException e) {
      try {
        c.close();
      } catch (SQLException ignored) {
        e.addSuppressed(ignored);
      }
      throw e;
    }
  }

  /**
   * Sessions other processes have open through this process's server on the file: 0 when no
   * connection of this source opened the file in this JVM, or the database it opened here is
   * closing or closed. Opens nothing.
   */
  public int othersSessions() {
    Database database = openedHere.get();
    return database == null ? 0 : ServedHere.othersSessions(database);
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("the pool opens connections without credentials");
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {
    // no log writer
  }

  /**
   * Kept and given back, not applied: opening is bounded by the open wait. HikariCP
   * sets it, and at shutdown waits that long for a connection still being opened; with 0 it did
   * not wait, and a connection opened after the pool closed was never closed, keeping H2's
   * database open in this JVM.
   */
  @Override
  public void setLoginTimeout(int seconds) {
    this.loginTimeoutSeconds = seconds;
  }

  @Override
  public int getLoginTimeout() {
    return loginTimeoutSeconds;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("java.util.logging is not used");
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    throw new SQLException("not a wrapper for " + type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) {
    return type.isInstance(this);
  }
}
