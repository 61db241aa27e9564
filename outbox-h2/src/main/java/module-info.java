/**
 * The H2 stores: API in {@code dev.outboxreplay.h2}; {@code internal} is exported only to H2,
 * which instantiates its file system plug-in ({@code RecoveringFileSystem}) by reflection.
 */
// "module": the name ends in "h2", as it always did; H2 declares a stable Automatic-Module-Name
@SuppressWarnings({"module", "requires-automatic"})
module dev.outboxreplay.h2 {
  requires transitive dev.outboxreplay.jdbc;
  requires transitive java.sql;
  requires com.h2database;
  requires com.zaxxer.hikari;
  requires org.slf4j;

  exports dev.outboxreplay.h2;
  exports dev.outboxreplay.h2.internal to com.h2database;
}
