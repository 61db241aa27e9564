package dev.outboxreplay.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.outboxreplay.sqlite.internal.StatementCachingDataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pooled SQLite connections keep their compiled statements: the same SQL is compiled once
 * per connection, and a statement given back leaves nothing behind: no read snapshot that would
 * keep a checkpoint from finishing, no transaction, no bound parameters, no statement usable
 * after close.
 */
class StatementCacheTest {
  @TempDir Path dir;
  SqliteDatabase db;
  StatementCachingDataSource cache;

  @BeforeEach
  void open() throws SQLException {
    db = SqliteDatabase.builder().file(dir.resolve("app.db")).maxPoolSize(2).build();
    cache = db.dataSource().unwrap(StatementCachingDataSource.class);
    try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
      for (int i = 0; i < 200; i++) {
        s.execute("INSERT INTO t (v) VALUES ('row " + i + "')");
      }
    }
  }

  @AfterEach
  void close() {
    db.close();
  }

  private DataSource pool() {
    return db.dataSource();
  }

  @Test
  void theSameSqlIsCompiledOncePerConnectionHoweverOftenItRuns() throws SQLException {
    long compiledBefore = cache.compiled();
    long reusedBefore = cache.reused();
    for (int i = 0; i < 100; i++) {
      try (Connection c = pool().getConnection();
          PreparedStatement ps = c.prepareStatement("SELECT v FROM t WHERE id = ?")) {
        ps.setInt(1, i + 1);
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getString(1)).isEqualTo("row " + i);
        }
      }
    }
    assertThat(cache.compiled() - compiledBefore).as("at most once per pooled connection")
        .isBetween(1L, 2L);
    assertThat(cache.reused() - reusedBefore).isGreaterThanOrEqualTo(98);
  }

  @Test
  void aStatementGivenBackHalfReadKeepsNoReadSnapshotOpen() throws SQLException {
    try (Connection reader = pool().getConnection();
        Connection writer = pool().getConnection()) {
      try (PreparedStatement ps = reader.prepareStatement("SELECT v FROM t ORDER BY id")) {
        ResultSet rs = ps.executeQuery(); // not closed by the caller, read one row of 200
        assertThat(rs.next()).isTrue();
      }
      try (Statement s = writer.createStatement()) {
        s.execute("INSERT INTO t (v) VALUES ('after')");
        try (ResultSet checkpoint = s.executeQuery("PRAGMA wal_checkpoint(TRUNCATE)")) {
          checkpoint.next();
          assertThat(checkpoint.getInt(1)).as("busy: a reader still holds a snapshot")
              .isZero();
        }
      }
      // the reader's connection sees the write: it holds no old snapshot either
      try (PreparedStatement ps = reader.prepareStatement("SELECT COUNT(*) FROM t");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(201);
      }
    }
  }

  @Test
  void aTransactionLeftOpenIsRolledBackWhenTheConnectionGoesBackToThePool()
      throws SQLException {
    try (Connection c = pool().getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (v) VALUES (?)")) {
        ps.setString(1, "never committed");
        ps.executeUpdate();
      }
    } // closed without commit or rollback
    try (Connection a = pool().getConnection(); Connection b = pool().getConnection();
        Statement s = b.createStatement()) {
      s.execute("INSERT INTO t (v) VALUES ('other writer')"); // no write lock left behind
      try (PreparedStatement ps = a.prepareStatement("SELECT COUNT(*) FROM t WHERE v = ?")) {
        ps.setString(1, "never committed");
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getInt(1)).isZero();
        }
      }
    }
  }

  @Test
  void parametersDoNotCarryOverAndAClosedStatementCannotBeUsed() throws SQLException {
    try (Connection c = pool().getConnection()) {
      PreparedStatement first = c.prepareStatement("SELECT ? IS NULL");
      first.setString(1, "bound");
      first.executeQuery().close();
      first.close();
      assertThat(first.isClosed()).isTrue();
      assertThatThrownBy(first::executeQuery).isInstanceOf(SQLException.class)
          .hasMessageContaining("closed");
      try (PreparedStatement again = c.prepareStatement("SELECT ? IS NULL");
          ResultSet rs = again.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).as("the parameter bound before is gone").isTrue();
      }
    }
  }

  @Test
  void theSameSqlWhileItsStatementIsOutGetsAStatementOfItsOwn() throws SQLException {
    try (Connection c = pool().getConnection();
        PreparedStatement outer = c.prepareStatement("SELECT v FROM t WHERE id = ?");
        PreparedStatement inner = c.prepareStatement("SELECT v FROM t WHERE id = ?")) {
      outer.setInt(1, 1);
      inner.setInt(1, 2);
      try (ResultSet a = outer.executeQuery(); ResultSet b = inner.executeQuery()) {
        assertThat(a.next() && b.next()).isTrue();
        assertThat(a.getString(1)).isEqualTo("row 0");
        assertThat(b.getString(1)).isEqualTo("row 1");
      }
    }
  }

  @Test
  void aStatementWhoseUseFailedIsNotLentAgain() throws SQLException {
    try (Connection c = pool().getConnection()) {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, ?)")) {
        ps.setInt(1, 1); // taken
        ps.setString(2, "duplicate");
        assertThatThrownBy(ps::executeUpdate).isInstanceOf(SQLException.class);
      }
      long compiled = cache.compiled();
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (id, v) VALUES (?, ?)")) {
        ps.setInt(1, 1000);
        ps.setString(2, "fresh");
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
      assertThat(cache.compiled()).as("compiled again after the failure").isEqualTo(compiled + 1);
    }
  }

  @Test
  void eachConnectionKeepsABoundedNumberOfStatements() throws SQLException {
    long compiled = cache.compiled();
    try (Connection c = pool().getConnection()) {
      for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 100; i++) {
          try (PreparedStatement ps = c.prepareStatement("SELECT " + i + " FROM t LIMIT 1");
              ResultSet rs = ps.executeQuery()) {
            rs.next();
          }
        }
      }
    }
    assertThat(cache.compiled() - compiled)
        .as("100 distinct statements over a cache of 64, LRU: the second round misses all")
        .isEqualTo(200);
  }
}
