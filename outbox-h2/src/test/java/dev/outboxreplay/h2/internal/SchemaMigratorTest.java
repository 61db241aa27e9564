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

  @Test
  void aColumnOrTableAnotherOpenerIsStillCreatingIsARace() throws SQLException {
    SQLException column = errorOf("UPDATE t SET first_sent_at = 1");
    assertThat(column.getErrorCode()).isEqualTo(42122);
    assertThat(SchemaMigrator.isRaceWithAnotherOpener(column)).isTrue();
    SQLException table = errorOf("UPDATE missing SET id = 1");
    assertThat(table.getErrorCode()).isEqualTo(42102);
    assertThat(SchemaMigrator.isRaceWithAnotherOpener(table)).isTrue();
  }

  @Test
  void aStepThatIsWrongIsNot() throws SQLException {
    SQLException syntax = errorOf("UPDATE t SET");
    assertThat(syntax.getErrorCode()).isEqualTo(42001);
    assertThat(SchemaMigrator.isRaceWithAnotherOpener(syntax)).isFalse();
    SQLException type = errorOf("INSERT INTO t VALUES ('not a number')");
    assertThat(SchemaMigrator.isRaceWithAnotherOpener(type)).isFalse();
  }
}
