package dev.outboxreplay.h2.internal;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.h2.engine.Database;
import org.h2.engine.Session;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this process serves a shared file, and how it lets go of it. In multi-process mode the
 * first process to open the file serves it to the others over loopback; H2 keeps a database open
 * while any session is on it, the other processes' sessions included, so closing the serving
 * process's pool alone leaves the file open and served until those processes disconnect or this
 * JVM exits (then H2's shutdown hook stops the server first, closing its sessions from another
 * thread while their statements may still run, and closes the file).
 *
 * <p>{@link #letGoOf} closes the file instead with H2's {@code SHUTDOWN}: the other
 * processes' sessions that are between statements are closed at once (an open transaction rolls
 * back), one running a statement is closed when that statement ends, and only then does H2 stop
 * its server and write and close the file. The other processes' calls fail as when the server
 * dies, and the library's retrying calls go on in the process that takes the file over.
 *
 * <p>Entry points used (public in H2 2.5.252): {@link JdbcConnection#getSession()}, {@link
 * SessionLocal#getDatabase()}, {@code Database.isClosing()}, {@code Database.getSessions(boolean)}
 * and {@link SessionLocal#getNetworkConnectionInfo()} (set on the sessions H2's server opens for
 * other processes). {@code ServedFileCloseTest} fails when an H2 upgrade changes what they say.
 */
public final class ServedHere {
  private static final Logger LOG = LoggerFactory.getLogger(ServedHere.class);

  private ServedHere() {}

  /**
   * The session behind {@code connection} when it reaches a database this JVM has open itself;
   * null when it goes through another process's server.
   *
   * @throws SQLException when the connection is not an H2 connection
   */
  public static SessionLocal localSession(Connection connection) throws SQLException {
    Session session = connection.unwrap(JdbcConnection.class).getSession();
    return session instanceof SessionLocal local ? local : null;
  }

  /**
   * Sessions other processes have open on {@code database} through this process's server; 0 when
   * it is closing or closed.
   */
  public static int othersSessions(Database database) {
    if (database.isClosing()) {
      return 0;
    }
    int others = 0;
    for (SessionLocal s : database.getSessions(false)) {
      if (s.getNetworkConnectionInfo() != null && !s.isClosed()) {
        others++;
      }
    }
    return others;
  }

  /**
   * What {@code H2Database.close()} does in multi-process mode before it closes its pool: when
   * this JVM serves {@code file}, which {@code source} opens, other processes have sessions on it,
   * and no other {@code H2Database} of this JVM still has it open, closes the file for everyone
   * ({@code SHUTDOWN}) and logs how many of their sessions it ended. The look first ({@link
   * RetryingOpenDataSource#othersSessions}) opens nothing. A failure is logged and not thrown:
   * the pool's close still closes this process's connections, and H2 closes the file when the
   * other processes disconnect or this JVM exits.
   *
   * <p>The statement runs on a connection of its own from {@code source}, not from the pool: a
   * pooled connection that the shutdown closed would make the pool open a replacement at once,
   * opening the file again in this process. That connection attaches to the database this JVM
   * has open; only if the database closed by itself in between (its last other session left)
   * does it open the file again, and then it finds no other session and just closes it.
   */
  public static void letGoOf(RetryingOpenDataSource source, Path file) {
    if (H2File.openHereCount(file) != 1 || source.othersSessions() == 0) {
      return; // another H2Database here still uses the file, or no other process is on it
    }
    try (Connection c = source.getConnection()) {
      SessionLocal local = localSession(c);
      int others = local == null ? 0 : othersSessions(local.getDatabase());
      if (others > 0) {
        try (Statement s = c.createStatement()) {
          s.execute("SHUTDOWN");
        }
        LOG.info("Closed {} for {} session(s) of other processes that reached it through this "
            + "one", file, others);
      }
    } catch (SQLException | RuntimeException e) {
      LOG.warn("Could not close {} for the other processes that reach it through this one: {}",
          file, e.toString());
    }
  }
}
