package dev.outboxreplay.h2.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * Which errors a migration runs again through: H2's own errors for DDL another opener is running
 * at the same instant, made by H2 here, against ones that are the file's or the step's fault.
 */
class SchemaMigratorTest {
  private static SQLException errorOf(String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:h2:mem:");
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE t (id INT)");
      return catchThrowableOfType(SQLException.class, () -> s.execute(sql));
    }
  }

  /** The error H2 gives {@code sql}, its code, and whether a migration runs again through it. */
  private static void assertRace(String sql, int code, boolean race) throws SQLException {
    SQLException e = errorOf(sql);
    assertThat(e.getErrorCode()).as(sql).isEqualTo(code);
    assertThat(SchemaMigrator.isRaceWithAnotherOpener(e)).as(sql).isEqualTo(race);
  }

  @Test
  void aColumnOrTableAnotherOpenerIsStillCreatingIsARace() throws SQLException {
    assertRace("UPDATE t SET first_sent_at = 1", 42122, true);
    assertRace("UPDATE missing SET id = 1", 42102, true);
  }

  @Test
  void aStepThatIsWrongIsNot() throws SQLException {
    assertRace("UPDATE t SET", 42001, false);
    assertRace("INSERT INTO t VALUES ('not a number')", 22018, false);
  }
}
