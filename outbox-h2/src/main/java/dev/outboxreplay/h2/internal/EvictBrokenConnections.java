package dev.outboxreplay.h2.internal;

import com.zaxxer.hikari.SQLExceptionOverride;
import java.sql.SQLException;

/**
 * Tells HikariCP to drop a connection whose database went away (the process serving a shared
 * file closed or died). Hikari evicts only on some SQL states; H2's "database is already closed"
 * is not one of them, so without this the pool handed the same dead connection back call after
 * call. Handed to HikariCP as an instance, so the module need not export this package.
 */
public final class EvictBrokenConnections implements SQLExceptionOverride {
  @java.lang.Override
  public Override adjudicate(SQLException e) {
    return H2Errors.isBrokenConnection(e) ? Override.MUST_EVICT : Override.CONTINUE_EVICT;
  }
}
