package dev.outboxreplay.sqlite.internal;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * SQLite connections that keep their prepared statements. sqlite-jdbc compiles a statement's SQL
 * again on every {@code prepareStatement}, and HikariCP caches none (by design: it leaves that
 * to drivers), so each state write of the outbox paid SQLite's parser and planner again; for the
 * wide {@code UPDATE ... RETURNING} statements that was about a third of SQLite's time in a
 * replay. The pool's physical connections come from here: {@code prepareStatement(sql)} hands
 * out the connection's compiled statement for {@code sql} when it is free, and the statement's
 * {@code close()} gives it back instead of finalizing it.
 *
 * <p>A statement goes back only in a clean state: its open result set closed (which resets it,
 * so that it holds no read snapshot of the WAL), its parameters cleared. One whose use threw, or
 * that is still handed out when the same SQL is asked for again, is a plain statement closed for
 * good. At most {@code perConnection} statements are kept per connection, least recently used
 * first to go. Closing the connection closes them all. A connection is used by one thread at a
 * time, as the pool lends it; the statistics are thread-safe.
 */
public final class StatementCachingDataSource implements DataSource {
  private final DataSource sqlite;
  private final int perConnection;
  private final AtomicLong compiled = new AtomicLong();
  private final AtomicLong reused = new AtomicLong();

  public StatementCachingDataSource(DataSource sqlite, int perConnection) {
    if (perConnection < 1) {
      throw new IllegalArgumentException("perConnection must be positive: " + perConnection);
    }
    this.sqlite = sqlite;
    this.perConnection = perConnection;
  }

  /** Statements compiled by SQLite through this data source: one per cache miss. */
  public long compiled() {
    return compiled.get();
  }

  /** Statements handed out again without compiling. */
  public long reused() {
    return reused.get();
  }

  @Override
  public Connection getConnection() throws SQLException {
    return new CachingConnection(sqlite.getConnection()).proxy;
  }

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    return new CachingConnection(sqlite.getConnection(user, password)).proxy;
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return sqlite.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    sqlite.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    sqlite.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return sqlite.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return sqlite.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    return type.isInstance(this) ? type.cast(this) : sqlite.unwrap(type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) throws SQLException {
    return type.isInstance(this) || sqlite.isWrapperFor(type);
  }

  private static Object call(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** One compiled statement of a connection, and whether it is handed out now. */
  private static final class Cached {
    final String sql;
    final PreparedStatement raw;
    boolean lent;
    /** No longer in the cache (evicted or the connection closing): closed when given back. */
    boolean dropped;

    Cached(String sql, PreparedStatement raw) {
      this.sql = sql;
      this.raw = raw;
    }
  }

  /** A physical connection with its statements, behind a {@link Connection} proxy. */
  private final class CachingConnection implements InvocationHandler {
    final Connection raw;
    final Connection proxy;
    final LinkedHashMap<String, Cached> statements = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Cached> eldest) {
        if (size() <= perConnection) {
          return false;
        }
        drop(eldest.getValue());
        return true;
      }
    };

    CachingConnection(Connection raw) {
      this.raw = raw;
      this.proxy = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
          new Class<?>[] {Connection.class}, this);
    }

    @Override
    public Object invoke(Object self, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      if (name.equals("prepareStatement") && args != null && args.length == 1
          && args[0] instanceof String sql) {
        return prepare(sql);
      }
      if (name.equals("close") && (args == null || args.length == 0)) {
        List<Cached> all = new ArrayList<>(statements.values());
        statements.clear();
        for (Cached c : all) {
          drop(c);
        }
        raw.close();
        return null;
      }
      return call(raw, method, args);
    }

    PreparedStatement prepare(String sql) throws SQLException {
      Cached cached = statements.get(sql);
      if (cached != null && cached.lent) {
        compiled.incrementAndGet();
        return raw.prepareStatement(sql); // asked for again while handed out: a plain one
      }
      if (cached == null) {
        compiled.incrementAndGet();
        cached = new Cached(sql, raw.prepareStatement(sql));
        statements.put(sql, cached);
      } else {
        reused.incrementAndGet();
      }
      cached.lent = true;
      return new Lent(this, cached).proxy;
    }

    /** Out of the cache: closed now, or when given back if it is handed out. */
    void drop(Cached cached) {
      cached.dropped = true;
      if (!cached.lent) {
        closeQuietly(cached.raw);
      }
    }

    void forget(Cached cached) {
      if (statements.get(cached.sql) == cached) {
        statements.remove(cached.sql);
      }
      cached.dropped = true;
    }
  }

  /** One lending of a cached statement: a proxy that gives it back when closed. */
  private static final class Lent implements InvocationHandler {
    final CachingConnection owner;
    final Cached cached;
    final PreparedStatement proxy;
    final List<ResultSet> results = new ArrayList<>(1);
    boolean returned;
    boolean failed;

    Lent(CachingConnection owner, Cached cached) {
      this.owner = owner;
      this.cached = cached;
      this.proxy = (PreparedStatement) Proxy.newProxyInstance(
          PreparedStatement.class.getClassLoader(), new Class<?>[] {PreparedStatement.class},
          this);
    }

    @Override
    public Object invoke(Object self, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      boolean noArgs = args == null || args.length == 0;
      if (name.equals("close") && noArgs) {
        giveBack();
        return null;
      }
      if (name.equals("isClosed") && noArgs) {
        return returned || cached.raw.isClosed();
      }
      if (returned) {
        throw new SQLException("statement is closed");
      }
      if (name.equals("getConnection") && noArgs) {
        return owner.proxy;
      }
      if (name.equals("equals")) {
        return self == args[0];
      }
      if (name.equals("hashCode")) {
        return System.identityHashCode(self);
      }
      try {
        Object result = call(cached.raw, method, args);
        if (result instanceof ResultSet rs) {
          results.add(rs);
        }
        return result;
      } catch (Throwable e) {
        failed = true; // whatever state it was left in, it is not lent again
        throw e;
      }
    }

    void giveBack() {
      if (returned) {
        return;
      }
      returned = true;
      cached.lent = false;
      boolean clean = !failed && !cached.dropped;
      for (ResultSet rs : results) {
        try {
          rs.close(); // resets the statement: no read snapshot stays open
        } catch (SQLException e) {
          clean = false;
        }
      }
      if (clean) {
        try {
          cached.raw.clearParameters();
          cached.raw.clearBatch();
        } catch (SQLException e) {
          clean = false;
        }
      }
      if (!clean) {
        owner.forget(cached);
        closeQuietly(cached.raw);
      }
    }
  }

  private static void closeQuietly(PreparedStatement statement) {
    try {
      statement.close();
    } catch (SQLException ignored) {
      // the connection closes the rest with it
    }
  }
}
