/**
 * The JDBC stores shared by every embedded engine: API and SPI in {@code dev.outboxreplay.jdbc}
 * ({@link dev.outboxreplay.jdbc.JdbcDatabase}, {@link dev.outboxreplay.jdbc.Dialect}, the stores);
 * {@code internal} is exported only to the engine modules.
 */
module dev.outboxreplay.jdbc {
  requires transitive dev.outboxreplay.core;
  requires transitive java.sql;
  requires org.slf4j;

  exports dev.outboxreplay.jdbc;
  exports dev.outboxreplay.jdbc.internal to dev.outboxreplay.h2, dev.outboxreplay.sqlite;
}
