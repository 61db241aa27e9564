/** The SQLite stores: API in {@code dev.outboxreplay.sqlite}. */
@SuppressWarnings({"module", "requires-automatic"})
module dev.outboxreplay.sqlite {
  requires transitive dev.outboxreplay.jdbc;
  requires transitive java.sql;
  requires org.xerial.sqlitejdbc;
  requires com.zaxxer.hikari;
  requires org.slf4j;

  exports dev.outboxreplay.sqlite;
}
